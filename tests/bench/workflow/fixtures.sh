#!/bin/sh
# fixtures.sh DIR FIRST COUNT ACTIONS: the objects of the workflow
# benchmark, as YAML for "ironbell apply -f", into DIR:
#   hardware-0.yaml  Hardware FIRST .. FIRST+COUNT-1, as tests/gen-hardware.sh
#                    writes them (node-NNNNNN, MAC 02:00:xx:xx:xx:xx of
#                    the number: the agent IDs tests/bench/workflow/agents
#                    uses);
#   template.yaml    one Template "bench-ACTIONS": one task for
#                    {{.device_1}}, ACTIONS actions of image busybox,
#                    command ["true"], timeout 60 (empty actions);
#   workflows.yaml   one Workflow per Hardware (wf-node-NNNNNN), of that
#                    Template, hardwareMap device_1 = the Hardware's MAC.
# All in the namespace "default". Written with awk, so that generating
# 1,000 of each costs little.
set -eu
[ $# -eq 4 ] || { echo "usage: $0 DIR FIRST COUNT ACTIONS" >&2; exit 2; }
dir=$1 first=$2 n=$3 actions=$4
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/../../gen-hardware.sh" "$first" "$n" "$n" "$dir/hardware-%d.yaml"
awk -v n="$actions" 'BEGIN {
	printf "apiVersion: tinkerbell.org/v1alpha1\nkind: Template\n";
	printf "metadata: {name: bench-%d, namespace: default}\n", n;
	printf "spec:\n  data: |\n    version: \"0.1\"\n    name: bench-%d\n", n;
	printf "    global_timeout: 3600\n    tasks:\n      - name: empty\n";
	printf "        worker: \"{{.device_1}}\"\n        actions:\n";
	for (i = 0; i < n; i++)
		printf "          - name: action-%d\n            image: busybox\n            timeout: 60\n            command: [\"true\"]\n", i;
}' >"$dir/template.yaml"
awk -v first="$first" -v n="$n" -v actions="$actions" 'BEGIN {
	for (i = first; i < first + n; i++) {
		printf "---\napiVersion: tinkerbell.org/v1alpha1\nkind: Workflow\n";
		printf "metadata: {name: wf-node-%06d, namespace: default}\n", i;
		printf "spec:\n  templateRef: bench-%d\n  hardwareRef: node-%06d\n", actions, i;
		printf "  hardwareMap:\n    device_1: \"02:00:%02x:%02x:%02x:%02x\"\n", int(i / 16777216) % 256, int(i / 65536) % 256, int(i / 256) % 256, i % 256;
	}
}' >"$dir/workflows.yaml"
