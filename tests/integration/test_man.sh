#!/bin/bash
# The manual page (docs/hopbench.1) and the bash completion
# (scripts/hopbench.bash-completion) stay in step with the binary:
# - groff formats the page without a warning;
# - every subcommand `hopbench --help` names has its "NAME OPTIONS" section, and the
#   options that section describes are exactly those `hopbench NAME --help` defines;
# - the completion, sourced into bash, offers the subcommands, a subcommand's options,
#   the protocols and the stacks the binary itself lists, and a file after --json.
. "$(dirname "$0")/lib.sh"
MAN=docs/hopbench.1
COMPLETION=scripts/hopbench.bash-completion
tmp=$T

# The long options a --help text defines (its option lines, not mentions in prose).
help_options() {
    sed -n -E 's/^ {2,8}(-[a-zA-Z], )?(--[a-z0-9][a-z0-9-]*).*/\2/p' | sort -u
}

# The long options the man page FILE's section SECTION describes: the first line
# after each .TP, up to the next .SH.
man_options() {
    awk -v want=".SH $2" '
        /^\.SH / { inside = ($0 == want) }
        inside && tp { print; tp = 0; next }
        inside && /^\.TP/ { tp = 1 }' "$1" |
        sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u
}

if warn=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1) && [ -z "$warn" ]; then
    ok "groff formats the man page without a warning"
else
    not_ok "groff formats the man page without a warning # $warn"
fi

subs=$("$HOPBENCH" --help | sed -n -E 's/^(usage:|      ) hopbench \[?([a-z]+)\]?.*/\2/p' | grep -vx help | sort -u)
if [ "$(echo "$subs" | wc -w)" -ge 7 ]; then
    ok "the usage names the subcommands ($(echo $subs))"
else
    not_ok "the usage names the subcommands # got: $subs"
fi
for sub in $subs; do
    section=$(echo "$sub" | tr '[:lower:]' '[:upper:]')
    "$HOPBENCH" "$sub" --help 2>&1 | help_options >"$tmp/help"
    man_options "$MAN" "$section OPTIONS" >"$tmp/man"
    if ! grep -qx "\.SH $section OPTIONS" "$MAN"; then
        not_ok "man page has a $section OPTIONS section"
    elif [ ! -s "$tmp/help" ]; then
        not_ok "hopbench $sub --help defines options"
    elif cmp -s "$tmp/help" "$tmp/man"; then
        ok "man $section OPTIONS describes exactly the $(wc -l <"$tmp/help") options of hopbench $sub --help"
    else
        not_ok "man $section OPTIONS = hopbench $sub --help # only in --help: $(comm -23 "$tmp/help" "$tmp/man" | tr '\n' ' ')only in the man page: $(comm -13 "$tmp/help" "$tmp/man" | tr '\n' ' ')"
    fi
done

# The comparison above can fail: a page without run's --cooldown lacks it.
sed '/^\\fB\\-\\-cooldown\\fR/d' "$MAN" >"$tmp/cut.1"
"$HOPBENCH" run --help | help_options >"$tmp/help"
man_options "$tmp/cut.1" "RUN OPTIONS" >"$tmp/man"
if [ "$(comm -23 "$tmp/help" "$tmp/man")" = "--cooldown" ]; then
    ok "a man page without run's --cooldown is found to lack it (the check can tell)"
else
    not_ok "a man page without run's --cooldown is found to lack it # $(comm -3 "$tmp/help" "$tmp/man" | tr '\n' ' ')"
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
protos=$("$HOPBENCH" --help | sed -n -E 's/^PROTO: +//p' | tr -d '|')
expect_complete "protocols after run" "hopbench run " $protos
expect_complete "protocols after --proto" "hopbench lab --proto " $protos
run_opts=$("$HOPBENCH" run --help | help_options)
# shellcheck disable=SC2086
expect_complete "every option of run" "hopbench run http unix:/x -" $run_opts
stacks=$("$HOPBENCH" stack list | awk 'NF { print $1 }')
# shellcheck disable=SC2086
expect_complete "stack names" "hopbench stack " list $stacks
expect_complete "endpoint schemes" "hopbench run echo " "tcp://127.0.0.1:" "unix:"
expect_complete "endpoint schemes after the protocol" "hopbench run echo t" "tcp://127.0.0.1:"
touch "$tmp/evidence-a.json"
expect_complete "a file after --json" "hopbench run echo unix:/x --json $tmp/evid" "$tmp/evidence-a.json"
expect_complete "evidence files for compare" "hopbench compare $tmp/evi" "$tmp/evidence-a.json"
agent_opts=$("$HOPBENCH" agent --help | help_options)
# shellcheck disable=SC2086
expect_complete "every option of agent" "hopbench agent -" $agent_opts
touch "$tmp/token-a"
expect_complete "a file after --agent-token-file" "hopbench run echo unix:/x --agent-token-file $tmp/tok" "$tmp/token-a"
expect_complete "a file after --schedule" "hopbench agent --schedule $tmp/tok" "$tmp/token-a"

done_testing
