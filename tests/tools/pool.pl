# pool.pl: a process pool whose children come and go, for --server-tree tests.
# It keeps one child at a time; each child burns CHILD_CPU_S (default 0.05) s
# of CPU, then exits, and the parent reaps it (wait) and forks the next, as a
# php-fpm master respawns workers. SIGTERM kills the child and exits.
# Bounded: a child burns at most CHILD_CPU_S; the parent only waits.
use strict;
use warnings;

my $burn = $ENV{CHILD_CPU_S} || 0.05;
my $kid = 0;
$SIG{TERM} = sub { kill 'KILL', $kid if $kid; exit 0 };
$| = 1;
print "pool: pid $$\n";
while (1) {
    $kid = fork;
    die "fork: $!" unless defined $kid;
    if ($kid == 0) {
        1 while (times)[0] + (times)[1] < $burn;
        exit 0;
    }
    waitpid($kid, 0);
    $kid = 0;
}
