/*
 * spawn: a built-in server as a child process of the measuring command (the
 * lab, and run with --netns), its listeners opened and the child forked in
 * the namespace the caller names (host/netns.h), so both stay there. The
 * child serves until SIGTERM, and dies with the thread that forked it
 * (PR_SET_PDEATHSIG). It leaves the terminal's signals to the parent, which
 * ends its run first and then stops the child.
 */
#ifndef HOPBENCH_SPAWN_H
#define HOPBENCH_SPAWN_H

#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

#include "host/netns.h"
#include "server/server.h"
#include "util.h"

/*
 * Opens cfg's listeners (a TCP port 0 in cfg->eps becomes the port the
 * server got) and forks the server into them, both inside side's namespace of
 * ns; the calling thread is back in the host's on return. *pid and *mirror (if
 * not NULL) hold the child's pid before any stop signal can come. `who` names
 * the child in its own error line ("lab server"). Returns 0 or a negative
 * errno with err set; on error no child runs and no listener is open.
 */
int spawn_server(const struct server_cfg *cfg, const struct netns *ns, enum netns_side side,
                 const char *who, _Atomic pid_t *mirror, pid_t *pid, struct hb_err *err);

/*
 * Stops the child *pid (SIGTERM, then waits for it) and sets *pid to 0; a
 * *pid <= 0 is nothing to stop. *mirror (if not NULL) holds -pid meanwhile:
 * the SIGCHLD of an exit asked for is not the server dying, and an abort
 * still stops it. Then 0.
 */
void spawn_stop(pid_t *pid, _Atomic pid_t *mirror);

/*
 * Whether the child *pid still runs: 0 if it does (or *pid <= 0). Once it
 * has exited it is reaped, *pid and *mirror set to 0, and how it ended written
 * to how ("was killed by SIGKILL", "exited with status 3"): -ECHILD.
 */
int spawn_check(pid_t *pid, _Atomic pid_t *mirror, char *how, size_t len);

#endif
