#!/bin/bash
# The manual page (docs/hopbench.1) and the bash completion
# (scripts/hopbench.bash-completion) stay in step with the binary:
# - groff formats the page without a warning;
# - every command of the binary's table (`hopbench help --commands`) has its "NAME OPTIONS"
#   section, and the options that section describes are exactly those of the command's option
#   table (`hopbench help --options NAME`), each with the same short form and value name, both
#   ways; `hopbench NAME --help`, drawn from the same table, defines the same;
# - each `hopbench run` example of README.md, docs/*.md and the page is a command line run
#   takes (its endpoints replaced by one nothing listens on, it fails only there);
# - the completion, sourced into bash, offers the commands, each command's options (the
#   table's), a file after --json, and exactly the words each list of `hopbench help --values`
#   gives (the parsers' own: test_cli test_values): each option's, run's protocols, serve's and
#   lab --proto's (only those with a built-in server), the stacks; an option's value is not
#   taken for the command's first word.
. "$(dirname "$0")/lib.sh"

need groff troff grotty python3
MAN=docs/hopbench.1
COMPLETION=scripts/hopbench.bash-completion
tmp=$T

# The man page FILE's section SECTION: the first line after each .TP (an option's
# entry), up to the next .SH, as text.
man_entries() {
    awk -v want=".SH $2" '
        /^\.SH / { inside = ($0 == want) }
        inside && tp { print; tp = 0; next }
        inside && /^\.TP/ { tp = 1 }' "$1" |
        sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g'
}

# The long options the man page FILE's section SECTION describes.
man_options() {
    man_entries "$1" "$2" | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u
}

if warn=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1) && [ -z "$warn" ]; then
    ok "groff formats the man page without a warning"
else
    not_ok "groff formats the man page without a warning # $warn"
fi

subs=$("$HOPBENCH" help --commands | sort)
usage_subs=$("$HOPBENCH" --help | sed -n -E 's/^(usage:|      ) hopbench \[?([a-z]+)\]?.*/\2/p' | grep -vx help | sort -u)
if [ "$(echo "$subs" | wc -w)" -ge 9 ] && [ "$subs" = "$usage_subs" ]; then
    ok "the table's commands are those the usage names ($(echo $subs))"
else
    not_ok "the table's commands are those the usage names # table: $(echo $subs); usage: $(echo $usage_subs)"
fi

# The options of a command's table: "c --connections N", " --mode M", "q --quiet ".
table_forms() {
    "$HOPBENCH" help --options "$1" | sort -u
}
table_options() {
    "$HOPBENCH" help --options "$1" | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u
}
for sub in $subs; do
    section=$(echo "$sub" | tr '[:lower:]' '[:upper:]')
    table_options "$sub" >"$tmp/table"
    man_options "$MAN" "$section OPTIONS" >"$tmp/man"
    if ! grep -qx "\.SH $section OPTIONS" "$MAN"; then
        not_ok "man page has a $section OPTIONS section"
    elif [ ! -s "$tmp/table" ]; then
        not_ok "hopbench $sub has options in its table"
    elif cmp -s "$tmp/table" "$tmp/man"; then
        ok "man $section OPTIONS describes exactly the $(wc -l <"$tmp/table") options of hopbench $sub's table"
    else
        not_ok "man $section OPTIONS = hopbench $sub's table # only in the table: $(comm -23 "$tmp/table" "$tmp/man" | tr '\n' ' ')only in the man page: $(comm -13 "$tmp/table" "$tmp/man" | tr '\n' ' ')"
    fi
done

# The forms each entry gives: "-c, --connections N" in --help and in the man page
# alike (the short letter and the value's name too, not only the long name).
help_forms() {
    sed -n -E 's/^ {2,8}(-([a-zA-Z]), )?(--[a-z0-9][a-z0-9-]*)( (\[?[A-Z][][A-Za-z0-9.,:|=-]*))?.*/\2 \3 \5/p' | sort -u
}
man_forms() {
    man_entries "$1" "$2" |
        sed -n -E 's/^(-([a-zA-Z]), )?(--[a-z0-9][a-z0-9-]*)( (\[?[A-Z][][A-Za-z0-9.,:|=-]*))?.*/\2 \3 \5/p' | sort -u
}

for sub in $subs; do
    section=$(echo "$sub" | tr '[:lower:]' '[:upper:]')
    table_forms "$sub" >"$tmp/tforms"
    "$HOPBENCH" "$sub" --help 2>&1 | help_forms >"$tmp/hforms"
    man_forms "$MAN" "$section OPTIONS" >"$tmp/mforms"
    if [ -s "$tmp/tforms" ] && cmp -s "$tmp/tforms" "$tmp/mforms"; then
        ok "man $section OPTIONS gives each option's short form and value as hopbench $sub's table does"
    else
        not_ok "man $section OPTIONS forms = hopbench $sub's table's" \
            "only in the table: $(comm -23 "$tmp/tforms" "$tmp/mforms" | tr '\n' ';') only in the man page: $(comm -13 "$tmp/tforms" "$tmp/mforms" | tr '\n' ';')"
    fi
    if cmp -s "$tmp/tforms" "$tmp/hforms"; then
        ok "hopbench $sub --help defines its table's options, with their short forms and values"
    else
        not_ok "hopbench $sub --help = its table" "$(comm -3 "$tmp/tforms" "$tmp/hforms" | tr '\n' ';')"
    fi
done

# `hopbench help NAME` is `hopbench NAME --help`, not the top-level help; `help stack NAME` the
# stack's own.
top=$("$HOPBENCH" help)
for sub in $subs; do
    if [ "$("$HOPBENCH" help "$sub")" = "$("$HOPBENCH" "$sub" --help)" ] && [ "$("$HOPBENCH" help "$sub")" != "$top" ]; then
        ok "hopbench help $sub prints hopbench $sub --help"
    else
        not_ok "hopbench help $sub prints hopbench $sub --help" "$("$HOPBENCH" help "$sub" | head -n 2)"
    fi
done
stack1=$("$HOPBENCH" stack list | awk 'NF { print $1; exit }')
if [ "$("$HOPBENCH" help stack "$stack1")" = "$("$HOPBENCH" stack "$stack1" --help)" ] &&
    [ "$("$HOPBENCH" help stack "$stack1")" != "$("$HOPBENCH" help stack)" ]; then
    ok "hopbench help stack $stack1 prints that stack's help"
else
    not_ok "hopbench help stack $stack1 prints that stack's help"
fi

# can_tell NAME SED TABLE-FILTER MAN-FILTER MISSING: the run section of the page cut by
# SED lacks exactly MISSING against run's table, as read by the two filters.
can_tell() {
    sed "$2" "$MAN" >"$tmp/cut.1"
    "$3" run >"$tmp/help"
    "$4" "$tmp/cut.1" "RUN OPTIONS" >"$tmp/man"
    if [ "$(comm -23 "$tmp/help" "$tmp/man")" = "$5" ]; then
        ok "$1 (the check can tell)"
    else
        not_ok "$1" "$(comm -3 "$tmp/help" "$tmp/man" | tr '\n' ';')"
    fi
}
# The comparisons above can fail: a page without run's --cooldown lacks it, and one
# whose --count lost its -n differs in form.
can_tell "a man page without run's --cooldown is found to lack it" \
    '/^\\fB\\-\\-cooldown\\fR/d' table_options man_options --cooldown
can_tell "a man page whose run --count lacks -n is found to differ" \
    's/^\\fB\\-n\\fR, \\fB\\-\\-count\\fR/\\fB\\-\\-count\\fR/' table_forms man_forms "n --count N"

# The `hopbench run` examples of README.md, docs/*.md and the man page's EXAMPLES, each
# with its endpoints replaced by a socket path nothing listens on: the command line is
# taken, and the only failure is that endpoint (exit 1, "cannot connect"), not a usage
# error. Left out: --netns (it starts its own server: test_netns.sh), --agent (a remote
# agent) and --service (the host's own cgroups and pids: test_services.sh).
run_examples() {
    {
        awk '/^    +hopbench run / {
                cmd = $0
                while (cmd ~ /\\$/ && (getline l) > 0) { sub(/ *\\$/, "", cmd); sub(/^ +/, " ", l); cmd = cmd l }
                print cmd
            }' README.md docs/*.md
        sed -n 's/^\.B "\(hopbench run .*\)"$/\1/p' "$MAN" | sed 's/\\-/-/g'
    } | sed -E 's/^ +//; s/ +# .*$//' | grep -vE -- '--(netns|agent|service) ' | sort -u
}
# example_ok EX : the run example EX, its endpoints replaced, fails only at that endpoint.
mkdir "$tmp/ex"
(umask 077 && echo secret >"$tmp/ex/pw") # the password file an example names (only its owner reads it)
none=$tmp/ex/none.sock
example_ok() {
    local words i rc=0
    # the words as a shell would split them (quotes kept together), not evaluated
    mapfile -d '' -t words < <(python3 -c 'import shlex, sys; sys.stdout.write("\0".join(shlex.split(sys.argv[1])))' "$1")
    for i in "${!words[@]}"; do
        if [[ ${words[$i]} =~ ^([a-z]+=)?(tcp://|unix:) ]]; then words[i]=${BASH_REMATCH[1]}unix:$none; fi
    done
    (cd "$tmp/ex" && exec timeout -k 5 30 "$HOPBENCH" "${words[@]:1}") >"$tmp/ex.out" 2>"$tmp/ex.err" || rc=$?
    [ "$rc" -eq 1 ] && grep -qF "cannot connect to unix:$none" "$tmp/ex.err"
}
n=0
while IFS= read -r ex; do
    n=$((n + 1))
    if example_ok "$ex"; then
        ok "the example '$ex' is a command line run takes"
    else
        not_ok "the example '$ex' is a command line run takes" "$(tail -n 1 "$tmp/ex.err")"
    fi
done < <(run_examples)
if [ "$n" -ge 10 ]; then
    ok "the docs' run examples were found ($n)"
else
    not_ok "the docs' run examples were found" "only $n"
fi
# An example run refuses (an open loop takes one request at a time) is found out.
if ! example_ok "hopbench run redis unix:/run/redis.sock --command get --pipeline 16 --rate 60%"; then
    ok "an example with --pipeline and --rate is found not to be taken (the check can tell)"
else
    not_ok "an example with --pipeline and --rate is found not to be taken" "$(cat "$tmp/ex.err")"
fi

# complete LINE: the completions bash offers for LINE (the word under the cursor last).
complete_line() {
    HB="$HOPBENCH" LINE="$1" bash --norc --noprofile -c '
        . "$0"
        read -r -a COMP_WORDS <<<"$LINE"
        [[ $LINE == *" " ]] && COMP_WORDS+=("")
        COMP_WORDS[0]=$HB
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE=$LINE
        _hopbench
        printf "%s\n" "${COMPREPLY[@]}"' "$COMPLETION"
}

# expect_complete NAME LINE WORD...: every WORD is offered for LINE.
expect_complete() {
    local name=$1 line=$2 got w missing=""
    shift 2
    got=$(complete_line "$line" 2>&1)
    for w in "$@"; do
        grep -qxF -- "$w" <<<"$got" || missing="$missing $w"
    done
    if [ -z "$missing" ]; then
        ok "completion: $name"
    else
        not_ok "completion: $name # missing:$missing; got: $(echo $got)"
    fi
}

expect_complete "subcommands" "hopbench " $subs
expect_complete "a prefix picks its subcommand" "hopbench st" stack
if [ "$(complete_line "hopbench st" | wc -l)" -eq 1 ]; then
    ok "completion: only stack starts with st"
else
    not_ok "completion: only stack starts with st # $(complete_line "hopbench st" | tr '\n' ' ')"
fi
# complete_exact NAME LINE WORD...: the words offered for LINE are exactly the WORDs.
complete_exact() {
    local name=$1 line=$2 got want
    shift 2
    got=$(complete_line "$line" 2>&1 | sort | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    if [ "$got" = "$want" ]; then
        ok "completion: $name"
    else
        not_ok "completion: $name" "got: $got; want: $want"
    fi
}
# words SUB KEY: the words of SUB's list KEY in hopbench help --values SUB.
words() { "$HOPBENCH" help --values "$1" | awk -v k="$2" '$1 == k { $1 = ""; print }'; }
protos=$("$HOPBENCH" --help | sed -n -E 's/^PROTO: +//p' | tr -d '|')
# shellcheck disable=SC2046
complete_exact "run's protocols are the registry's" "hopbench run " $protos
nlists=0
for sub in $subs; do
    while read -r key list; do
        nlists=$((nlists + 1))
        case $key in
        -) line="hopbench $sub " what="its first word" ;;
        *) line="hopbench $sub $key " what=$key ;;
        esac
        [ "$sub" = serve ] && [ "$key" != - ] && line="hopbench serve echo $key "
        # shellcheck disable=SC2086
        complete_exact "$sub $what: the parser's words" "$line" $list
    done < <("$HOPBENCH" help --values "$sub")
done
check "the lists are there (run, lab, serve, stack: $nlists)" test "$nlists" -ge 19
# The four that offered words the parser refuses or lacked one it takes, before the lists:
# run --wait lacked uring; lab --proto and serve offered pg and mysql, which have no built-in
# server; a value of an option (-c 4) was taken for the protocol, so endpoints were offered.
# shellcheck disable=SC2046
complete_exact "run --wait offers uring" "hopbench run --wait " epoll block uring
# shellcheck disable=SC2046
complete_exact "lab --proto offers only protocols with a server" "hopbench lab --proto " \
    $(words lab --proto)
check "lab --proto's list lacks pg" test -z "$(words lab --proto | grep -w pg)"
# shellcheck disable=SC2046
complete_exact "serve offers only protocols with a server" "hopbench serve " $(words serve -)
# shellcheck disable=SC2086
complete_exact "an option's value is no protocol" "hopbench run -c 4 " $protos
expect_complete "a comma list goes on after its comma" \
    "hopbench run pg unix:/x --auth-method scram-sha-256,m" "scram-sha-256,md5"
run_opts=$(table_options run)
# shellcheck disable=SC2086
expect_complete "every option of run" "hopbench run http unix:/x -" $run_opts
stacks=$("$HOPBENCH" stack list | awk 'NF { print $1 }')
# shellcheck disable=SC2086
expect_complete "stack names" "hopbench stack " list $stacks
expect_complete "endpoint schemes" "hopbench run echo " "tcp://127.0.0.1:" "unix:"
expect_complete "pg's ways of authenticating after --auth-method" \
    "hopbench run pg unix:/x --auth-method " scram-sha-256 md5 password none
expect_complete "a file after --server-public-key" "hopbench run mysql unix:/x --server-public-key sc" \
    scripts
expect_complete "endpoint schemes after the protocol" "hopbench run echo t" "tcp://127.0.0.1:"
touch "$tmp/evidence-a.json"
expect_complete "a file after --json" "hopbench run echo unix:/x --json $tmp/evid" "$tmp/evidence-a.json"
expect_complete "evidence files for compare" "hopbench compare $tmp/evi" "$tmp/evidence-a.json"
agent_opts=$(table_options agent)
# shellcheck disable=SC2086
expect_complete "every option of agent" "hopbench agent -" $agent_opts
# and every option of each other subcommand, after the words it takes first
for line in "lab -" "serve echo -" "stack redis -" "cost x.json -" "report x.json -" "merge -" "compare -"; do
    sub=${line%% *}
    opts=$(table_options "$sub")
    # shellcheck disable=SC2086
    expect_complete "every option of $sub" "hopbench $line" $opts
done
touch "$tmp/token-a"
expect_complete "a file after --agent-token-file" "hopbench run echo unix:/x --agent-token-file $tmp/tok" "$tmp/token-a"
expect_complete "a file after --schedule" "hopbench agent --schedule $tmp/tok" "$tmp/token-a"

done_testing
