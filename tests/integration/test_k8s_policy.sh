#!/usr/bin/env bash
# deploy/k8s/stack-service-policy.yaml, checked statically: podman kube play ignores a
# NetworkPolicy, so tests/integration/k8s_policy.py evaluates it against the labels of every
# manifest in deploy/k8s/ (the php-fpm pod guarded, only the web pod let in, not the load
# Job's pods, on the Service's targetPort) and checks that a policy broken each of those ways
# is refused.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need python3 yaml
tap_from python3 tests/integration/k8s_policy.py deploy/k8s
# the script exits 1 on any failed check; a crash before its lines would show here
python3 tests/integration/k8s_policy.py deploy/k8s >/dev/null 2>&1
check_eq "k8s_policy.py exits 0" 0 "$?"
done_testing
