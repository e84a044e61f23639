#!/bin/bash
# Output files (--json, --jsonl, merge -o) never replace what is not the user's
# regular file: a device node or a FIFO is written in place and stays what it
# was, a symbolic link stays a link and its target gets the document, a
# directory is refused before any run, and a read-only or full file system
# gives one line, exit 1, no temporary file left and the old file untouched.
# --jsonl on a full file system keeps only whole lines (the part of a line is
# cut back off) and says why; a --jsonl file whose last line has no end is
# refused, not appended to (compare says the line is cut short); a --jsonl
# file that starts with blank lines is read; another user's file in a sticky
# directory is refused; a new file is 0644 less the umask.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_server srv --listen tcp://127.0.0.1:0 || done_testing
tcp=tcp://127.0.0.1:$SRV_PORT

# run_json OUT NAME WANT-RC OPTIONS... : a short bounded run with OPTIONS (--json,
# --jsonl); its stdout and stderr in $T/OUT.out and $T/OUT.err.
run_json() {
    local out=$1 name=$2 want=$3
    shift 3
    expect_rc "$name: exit $want" "$want" "$out" run echo "$tcp" -n 200 --warmup 0 "$@"
}

# node_kind PATH : "character special file 1:3", "fifo", "symbolic link", ...
node_kind() {
    stat -c '%F %t:%T' "$1" 2>/dev/null | sed 's/ 0:0$//'
}

# no_tmp DIR : no temporary file (NAME.tmp.PID.N) is left in DIR.
# shellcheck disable=SC2317 # called through check
no_tmp() {
    [ -z "$(find "$1" -maxdepth 1 -name '*.tmp.*' -print -quit)" ]
}

# doc_ok NAME FILE COMMAND : FILE is one whole evidence document of COMMAND.
doc_ok() {
    jcheck "$1" "$2" '.schema == "hopbench.evidence/1" and .command == "'"$3"'"
                      and (.runs | length) >= 1'
}

# wait_fifo_reader PID : until PID waits in open(2) for a FIFO's writer (bounded, 5 s).
wait_fifo_reader() {
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(cat "/proc/$1/wchan" 2>/dev/null)" = wait_for_partner ] && return 0
        sleep 0.05
    done
}

# A regular file, for merge -o below.
run_json reg "regular file" 0 --json "$T/a.json"
doc_ok "regular file: the document" "$T/a.json" run
cp "$T/a.json" "$T/b.json"

# --- character devices --------------------------------------------------------------

if mknod "$T/dev_null" c 1 3 2>/dev/null && mknod "$T/dev_full" c 1 7 2>/dev/null; then
    run_json null "--json onto a null device node" 0 --json "$T/dev_null"
    check_eq "null device node: still the same character device" \
        "character special file 1:3" "$(node_kind "$T/dev_null")"
    check "null device node: evidence line printed" grep -qx "evidence: $T/dev_null" \
        "$T/null.out"

    # /dev/full answers every write with ENOSPC: the write went to the device itself.
    run_json full_dev "--json onto a full device node" 1 --json "$T/dev_full"
    one_line "full device node: one line on stderr" "$T/full_dev.err" \
        "^hopbench run: cannot write $T/dev_full: No space left on device; the evidence was not saved"
    check_eq "full device node: still the same character device" \
        "character special file 1:7" "$(node_kind "$T/dev_full")"
    check_eq "full device node: the run's table is still printed" 1 \
        "$(table_rows "$T/full_dev.out")"

    run_json jl_null "--jsonl onto a null device node" 0 --json "$T/j0.json" --jsonl "$T/dev_null"
    check_eq "--jsonl null device node: still the same character device" \
        "character special file 1:3" "$(node_kind "$T/dev_null")"
    run_json jl_full "--jsonl onto a full device node" 1 --json "$T/j1.json" --jsonl "$T/dev_full"
    one_line "--jsonl full device node: one line with the reason" "$T/jl_full.err" \
        "^hopbench run: --jsonl: cannot write $T/dev_full: No space left on device\$"
    check_eq "--jsonl full device node: still the same character device" \
        "character special file 1:7" "$(node_kind "$T/dev_full")"

    expect_rc "merge -o onto a null device node: exit 0" 0 mnull merge "$T/a.json" "$T/b.json" \
        -o "$T/dev_null"
    check_eq "merge -o null device node: still the same character device" \
        "character special file 1:3" "$(node_kind "$T/dev_null")"
    # A block device is never written (nor even opened): refused before any run.
    if mknod "$T/dev_blk" b 7 250 2>/dev/null; then
        run_json blk "--json onto a block device node" 1 --json "$T/dev_blk"
        one_line "block device node: one line" "$T/blk.err" \
            "^hopbench run: cannot write $T/dev_blk: it is a block device \(never written\)\$"
        check_eq "block device node: refused before any run" 0 "$(table_rows "$T/blk.out")"
        check_eq "block device node: still the same block device" "block special file 7:fa" \
            "$(node_kind "$T/dev_blk")"
    fi
    check "no temporary file left beside the device nodes" no_tmp "$T"
else
    ok "device nodes # SKIP mknod not permitted here"
fi

# --- FIFOs ---------------------------------------------------------------------------

mkfifo "$T/fifo"
spawn_cmd fifo_cat cat "$T/fifo"
cat_pid=$SPAWNED
wait_fifo_reader "$cat_pid"
run_json fifo "--json onto a FIFO with a reader" 0 --json "$T/fifo"
reap "$cat_pid" 5
check_eq "FIFO: the reader ended (end of file after the document)" 0 "$RC"
doc_ok "FIFO: the reader received the whole document" "$T/fifo_cat.out" run
check_eq "FIFO: still a FIFO" "fifo" "$(node_kind "$T/fifo")"

run_json fifo_none "--json onto a FIFO without a reader" 1 --json "$T/fifo"
one_line "FIFO without a reader: one line" "$T/fifo_none.err" \
    "^hopbench run: cannot write $T/fifo: no process has the FIFO open for reading; the evidence was not saved"
check_eq "FIFO without a reader: the table is still printed" 1 \
    "$(table_rows "$T/fifo_none.out")"
check_eq "FIFO without a reader: still a FIFO" "fifo" "$(node_kind "$T/fifo")"

spawn_cmd fifo_jl cat "$T/fifo"
cat_pid=$SPAWNED
wait_fifo_reader "$cat_pid"
run_json jl_fifo "--jsonl onto a FIFO with a reader" 0 --json "$T/j2.json" --jsonl "$T/fifo"
reap "$cat_pid" 5
check "--jsonl FIFO: the reader received the header and the run line" \
    jtrue -s '(length == 2) and .[0].record == "header" and .[1].record == "run"' \
    "$T/fifo_jl.out"
check_eq "--jsonl FIFO: still a FIFO" "fifo" "$(node_kind "$T/fifo")"

# --- symbolic links ------------------------------------------------------------------

mkdir "$T/sub"
echo old >"$T/sub/real.json"
chmod 640 "$T/sub/real.json"
ln -s sub/real.json "$T/link"
ln -s link "$T/link2" # a chain: link2 -> link -> sub/real.json
run_json link "--json onto a symlink" 0 --json "$T/link2"
check_eq "symlink: still a link, to the same name" "symbolic link sub/real.json link" \
    "$(node_kind "$T/link") $(readlink "$T/link") $(readlink "$T/link2")"
doc_ok "symlink: its target holds the document" "$T/sub/real.json" run
check_eq "symlink: the target keeps its mode" 640 "$(stat -c %a "$T/sub/real.json")"
check "symlink: no temporary file left in the link's or the target's directory" \
    sh -c "! find '$T' -name '*.tmp.*' | grep -q ."

ln -s sub/new.json "$T/dangling"
run_json dangling "--json onto a dangling symlink" 0 --json "$T/dangling"
check_eq "dangling symlink: still a link" "symbolic link" "$(node_kind "$T/dangling")"
doc_ok "dangling symlink: its target was created with the document" "$T/sub/new.json" run

ln -s sub/lines.jsonl "$T/jlink"
run_json jl_link1 "--jsonl onto a symlink" 0 --json "$T/j3.json" --jsonl "$T/jlink"
run_json jl_link2 "--jsonl onto a symlink, again" 0 --json "$T/j4.json" --jsonl "$T/jlink"
check_eq "--jsonl symlink: still a link" "symbolic link" "$(node_kind "$T/jlink")"
check_eq "--jsonl symlink: the target has both invocations' lines" 4 \
    "$(wc -l <"$T/sub/lines.jsonl")"

expect_rc "merge -o onto a symlink: exit 0" 0 mlink merge "$T/a.json" "$T/b.json" -o "$T/link"
check_eq "merge -o symlink: still a link" "symbolic link" "$(node_kind "$T/link")"
doc_ok "merge -o symlink: its target holds the merged document" "$T/sub/real.json" merge

# --- /dev/stdout: the document lands where stdout stands ------------------------------

run_json stdout "--json /dev/stdout into a file" 0 --json /dev/stdout
out="$T/stdout.out"
check_eq "/dev/stdout: the table is kept" 1 "$(table_rows "$out")"
check "/dev/stdout: the document follows the table" \
    jtrue -e '.command == "run"' <(sed -n '/^{$/,/^}$/p' "$out")
check "/dev/stdout: the evidence line comes last" sh -c "tail -n 1 '$out' | grep -qx 'evidence: /dev/stdout'"

# --- refused before any run: a directory, a missing one --------------------------------

mkdir "$T/adir"
run_json dir "--json onto a directory" 1 --json "$T/adir"
one_line "directory: one line" "$T/dir.err" \
    "^hopbench run: cannot write $T/adir: it is a directory\$"
check_eq "directory: refused before any run" 0 "$(table_rows "$T/dir.out")"
run_json nodir "--json into a missing directory" 1 --json "$T/nodir/x.json"
one_line "missing directory: one line" "$T/nodir.err" \
    "^hopbench run: cannot write $T/nodir/x.json: No such file or directory\$"
check_eq "missing directory: refused before any run" 0 "$(table_rows "$T/nodir.out")"
run_json jl_dir "--jsonl onto a directory" 1 --jsonl "$T/adir"
one_line "--jsonl directory: one line" "$T/jl_dir.err" \
    "^hopbench run: --jsonl: cannot write $T/adir: it is a directory\$"
expect_rc "lab --json onto a directory: exit 1" 1 lab_dir lab --quick --json "$T/adir"
one_line "lab directory: one line, before the lab starts" "$T/lab_dir.err" \
    "^hopbench lab: cannot write $T/adir: it is a directory\$"
check_eq "lab directory: nothing printed (no server, no cell)" 0 "$(wc -c <"$T/lab_dir.out")"
expect_rc "merge -o onto a directory: exit 1" 1 mdir merge "$T/a.json" "$T/b.json" -o "$T/adir"
one_line "merge -o directory: one line" "$T/mdir.err" \
    "^hopbench merge: cannot write $T/adir: it is a directory\$"
check "directory: still an empty directory" sh -c "[ -d '$T/adir' ] && [ -z \"\$(ls -A '$T/adir')\" ]"

# --- read-only and full file systems: a tiny tmpfs in a private mount namespace ---------

# in_tmpfs NAME OPTIONS SCRIPT : runs SCRIPT (sh) in a new mount namespace with a tmpfs
# (mount OPTIONS) of one page on $T/NAME holding a file x.json that says "old", which
# fills it, so that any write after it finds no room however small; SCRIPT sees $M (the
# mount point) and $HB (hopbench). After SCRIPT: $T/NAME.after is x.json's content and
# $T/NAME.ls the files left there. The mount ends with the namespace. 1 if impossible here.
in_tmpfs() {
    local name=$1 opts=$2 script=$3
    mkdir -p "$T/$name"
    M=$T/$name HB=$HOPBENCH TD=$T timeout -k 5 60 unshare -m --propagation private sh -c '
        mount -t tmpfs -o size=4k tmpfs "$M" || exit 99
        echo old >"$M/x.json"
        mount -o "remount,$1" "$M" || exit 99
        cd "$TD" && eval "$2"
        cat "$M/x.json" >"$M.after"
        ls -A "$M" >"$M.ls"' sh "$opts" "$script"
    [ $? -ne 99 ]
}

if unshare -m --propagation private true 2>/dev/null; then
    # run_in NAME OPTIONS : a run whose --json is x.json in the tmpfs; RC in $T/NAME.rc.
    run_in() {
        in_tmpfs "$1" "$2" '"$HB" run echo '"$tcp"' -n 200 --warmup 0 --json "$M/x.json" \
            >"$M.out" 2>"$M.err"; echo $? >"$M.rc"'
    }
    if run_in fs_ro ro; then
        check_eq "read-only file system: exit 1" 1 "$(cat "$T/fs_ro.rc")"
        one_line "read-only file system: one line" "$T/fs_ro.err" \
            "^hopbench run: cannot write $T/fs_ro/x.json: Read-only file system\$"
        check_eq "read-only file system: refused before any run" 0 "$(table_rows "$T/fs_ro.out")"
        check_eq "read-only file system: the old file untouched" old "$(cat "$T/fs_ro.after")"
        check_eq "read-only file system: nothing else left there" x.json "$(cat "$T/fs_ro.ls")"
    else
        ok "read-only file system # SKIP cannot mount a tmpfs in a mount namespace here"
    fi
    if run_in fs_full rw; then
        check_eq "full file system: exit 1" 1 "$(cat "$T/fs_full.rc")"
        one_line "full file system: one line" "$T/fs_full.err" \
            "^hopbench run: cannot write $T/fs_full/x.json: No space left on device; the evidence was not saved"
        check_eq "full file system: the run's table is still printed" 1 \
            "$(table_rows "$T/fs_full.out")"
        check_eq "full file system: the old file untouched" old "$(cat "$T/fs_full.after")"
        check_eq "full file system: no temporary file left" x.json "$(cat "$T/fs_full.ls")"
    fi
    if in_tmpfs fs_mfull rw '"$HB" merge a.json b.json -o "$M/x.json" >"$M.out" 2>"$M.err"
                          echo $? >"$M.rc"'; then
        check_eq "merge -o on a full file system: exit 1" 1 "$(cat "$T/fs_mfull.rc")"
        one_line "merge -o full file system: one line" "$T/fs_mfull.err" \
            "^hopbench merge: cannot write $T/fs_mfull/x.json: No space left on device\$"
        check_eq "merge -o full file system: the old file untouched" old "$(cat "$T/fs_mfull.after")"
        check_eq "merge -o full file system: no temporary file left" x.json \
            "$(cat "$T/fs_mfull.ls")"
    fi
    # --jsonl on a full file system: the header line (about 1.2 kB) fits the one page, the run's
    # line (about 5 kB) does not: its first part is written, then ENOSPC. After the run only whole
    # lines are there; once there is room (remount) the next run appends its lines after them.
    mkdir -p "$T/fs_jl"
    M=$T/fs_jl HB=$HOPBENCH EP=$tcp timeout -k 5 60 unshare -m --propagation private sh -c '
        mount -t tmpfs -o size=4k tmpfs "$M" || exit 99
        jl() { "$HB" run echo "$EP" -n 200 --warmup 0 --json "$M.$1.json" --jsonl "$M/x.jsonl" \
            >"$M.$1.out" 2>"$M.$1.err"; echo $? >"$M.$1.rc"; cp "$M/x.jsonl" "$M.$1.jsonl"; }
        jl full
        mount -o remount,size=64k "$M" || exit 99
        jl room'
    if [ $? -ne 99 ]; then
        check_eq "--jsonl full file system: exit 1" 1 "$(cat "$T/fs_jl.full.rc")"
        one_line "--jsonl full file system: one line with the reason" "$T/fs_jl.full.err" \
            "^hopbench run: --jsonl: cannot write $T/fs_jl/x.jsonl: No space left on device\$"
        check_eq "--jsonl full file system: the file ends with a line end" 0a \
            "$(tail -c 1 "$T/fs_jl.full.jsonl" | od -An -tx1 | tr -d ' ')"
        check "--jsonl full file system: only whole lines, each JSON (the header)" \
            jtrue -s 'length == 1 and .[0].record == "header"' "$T/fs_jl.full.jsonl"
        check_eq "--jsonl with room again: exit 0" 0 "$(cat "$T/fs_jl.room.rc")"
        check "--jsonl with room again: two headers and the run, each a whole line" \
            jtrue -s '[.[].record] == ["header", "header", "run"]' "$T/fs_jl.room.jsonl"
        expect_rc "compare reads the file the full disk left" 0 fs_jl_cmp compare \
            "$T/fs_jl.room.jsonl" "$T/fs_jl.room.jsonl"
        check "compare: its one run counts" grep -q "(1 runs, 1 valid)" "$T/fs_jl_cmp.out"
    else
        ok "--jsonl on a full file system # SKIP cannot mount a tmpfs in a mount namespace here"
    fi
else
    ok "read-only and full file systems # SKIP no private mount namespace (unshare -m) here"
fi

# --- a --jsonl file whose last line has no end (cut short by an older version) ------------

run_json jl_good "a --jsonl file" 0 --json "$T/jg.json" --jsonl "$T/good.jsonl"
cp "$T/good.jsonl" "$T/torn.jsonl"
printf '{"record":"run","cell":0,"ga' >>"$T/torn.jsonl"
whole=$(wc -c <"$T/good.jsonl")
cp "$T/torn.jsonl" "$T/torn.before"
run_json jl_torn "--jsonl onto a file whose last line has no end" 1 --json "$T/jt.json" \
    --jsonl "$T/torn.jsonl"
one_line "last line without its end: one line naming where it starts" "$T/jl_torn.err" \
    "^hopbench run: --jsonl: cannot append to $T/torn.jsonl: its last line has no end \(bytes $whole to $((whole + 28)), a write cut short\); truncate the file to $whole bytes"
check "last line without its end: the file untouched" cmp -s "$T/torn.before" "$T/torn.jsonl"
check_eq "last line without its end: refused before any run" 0 "$(table_rows "$T/jl_torn.out")"
expect_rc "compare of that file: exit 1" 1 torn_cmp compare "$T/torn.jsonl" "$T/good.jsonl"
one_line "compare of that file: one line, the line cut short and where" "$T/torn_cmp.err" \
    "^hopbench compare: $T/torn.jsonl: line 3: cut short \(no line end, from byte $whole\): not JSON"
truncate -s "$whole" "$T/torn.jsonl"
run_json jl_cut "--jsonl once truncated as said" 0 --json "$T/jc.json" --jsonl "$T/torn.jsonl"
check "truncated as said: two invocations' whole lines" \
    jtrue -s '[.[].record] == ["header", "run", "header", "run"]' "$T/torn.jsonl"

# A --jsonl file that starts with blank lines is still one (compare, merge, report read it).
printf '\n \n' | cat - "$T/good.jsonl" >"$T/blank.jsonl"
expect_rc "compare: a --jsonl file that starts with blank lines" 0 blank_cmp compare \
    "$T/blank.jsonl" "$T/good.jsonl"
check "compare: its run counts" grep -q "^old: $T/blank.jsonl (1 runs, 1 valid)" "$T/blank_cmp.out"

# --- another user's file in a sticky directory (as /tmp): never written ------------------

if [ "$(id -u)" = 0 ]; then
    mkdir -m 1777 "$T/sticky"
    echo old >"$T/sticky/theirs.json"
    chown 65534:65534 "$T/sticky/theirs.json"
    chmod 666 "$T/sticky/theirs.json"
    for opt in --json --jsonl; do
        run_json "sticky$opt" "$opt onto another user's file in a sticky directory" 1 \
            --json "$T/js.json" "$opt" "$T/sticky/theirs.json"
        check "$opt sticky: one line naming the file and its owner" grep -q \
            "cannot write $T/sticky/theirs.json: it is another user's file (uid 65534) in a sticky directory" \
            "$T/sticky$opt.err"
        check_eq "$opt sticky: refused before any run" 0 "$(table_rows "$T/sticky$opt.out")"
    done
    check_eq "sticky: their file untouched (owner, mode, content)" "65534 666 old" \
        "$(stat -c '%u %a' "$T/sticky/theirs.json") $(cat "$T/sticky/theirs.json")"
else
    ok "another user's file in a sticky directory # SKIP not root (cannot give a file away)"
fi

# A new file (--jsonl creates it in place, --json by rename) gets 0644 less the umask: with
# umask 027 that is 0640, with umask 0 0644 (never writable by others).
(umask 027 && run_json new_mode "new --jsonl and --json files" 0 --json "$T/new.json" \
    --jsonl "$T/new.jsonl")
check_eq "a new --jsonl file: mode 0644 less the umask (027)" 640 "$(stat -c %a "$T/new.jsonl")"
check_eq "a new --json file: mode 0644 less the umask (027)" 640 "$(stat -c %a "$T/new.json")"
(umask 0 && run_json new_mode0 "new files, umask 0" 0 --json "$T/new0.json" \
    --jsonl "$T/new0.jsonl")
check_eq "umask 0: a new --jsonl file is 0644" 644 "$(stat -c %a "$T/new0.jsonl")"
check_eq "umask 0: a new --json file is 0644" 644 "$(stat -c %a "$T/new0.json")"

stop_server "$SRV_PID" "$SRV_OUT"
done_testing
