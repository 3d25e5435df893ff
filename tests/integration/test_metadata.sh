#!/bin/sh
# test_metadata — instance metadata from a real ironbelld on the loopback
# address (the Hardware owns 127.0.0.1), with curl and with cloud-init's
# own code as the client: every EC2 path and listing, empty fields, 404s,
# content types, /metadata, NoCloud, Ignition, /tootles/; then cloud-init's
# EC2 crawler (cloudinit.sources.helpers.ec2), its NoCloud seed reader
# (cloudinit.util.read_seeded) and its network-config parser and
# renderers (cloudinit.net) on what ironbelld serves. cloud-init is
# fetched from the Debian archive and unpacked (tools/deb-fetch), never
# installed.
set -u

. "$top_srcdir/tests/lib.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
PY=/usr/bin/python3

ib_write_config || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"
BASE=http://127.0.0.1:$IB_HTTP_PORT
UUID=0b7e6c9a-1111-4222-8333-444455556666

cat >"$IB_TMP/hw.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: m1
  namespace: default
  annotations:
    ironbell.dev/system-uuid: $UUID
spec:
  userData: |
    #cloud-config
    hostname: m1
  vendorData: |
    #cloud-config
    runcmd: [echo vendor]
  metadata:
    facility:
      facility_code: onprem
      plan_slug: c3.small
    instance:
      id: i-m1
      hostname: m1.lab.example
      tags: [rack-1, gpu]
      ssh_keys:
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAA alice@laptop
      - ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ
      operating_system: {slug: ubuntu_22_04, distro: ubuntu, version: "22.04", image_tag: jammy}
      ips:
      - {address: 127.0.0.1, family: 4, public: false}
      - {address: 198.51.100.7, family: 4, public: true}
      - {address: "2001:db8::7", family: 6, public: true}
      storage:
        disks:
        - device: /dev/sda
          wipe_table: true
          partitions: [{label: ROOT, number: 1, size: 0}]
  interfaces:
  - dhcp:
      mac: 52:54:00:12:34:56
      hostname: m1
      domain_name: lab.example
      name_servers: [192.0.2.53, 192.0.2.54]
      ip: {address: 127.0.0.1, netmask: 255.0.0.0, gateway: 127.0.0.254}
      classless_static_routes:
      - {destination_descriptor: 10.0.0.0/8, router: 127.0.0.253}
    netboot: {allowPXE: true}
  - dhcp:
      mac: 52:54:00:12:34:57
      vlan_id: "42"
      ip: {address: 172.16.0.9, netmask: 255.255.255.0}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: other
  namespace: default
spec:
  userData: "secret of another machine"
  metadata:
    instance: {id: i-other, hostname: other}
  interfaces:
  - dhcp:
      mac: 52:54:00:00:00:99
      ip: {address: 127.0.0.99, netmask: 255.0.0.0}
EOF
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "two Hardware are applied"

# get PATH [CURL ARGS...]: sets $code, $ctype, $out.
get() {
	_p=$1
	shift
	run curl -s --path-as-is --max-time 10 -o "$IB_TMP/body" -w '%{http_code} %{content_type}' \
		"$@" "$BASE$_p"
	code=${out%% *}
	ctype=${out#* }
	out=$(cat "$IB_TMP/body")
}

# ---- EC2 ----

for v in 2009-04-04 latest; do
	get /$v
	is "$code $out" "200 meta-data/
user-data
vendor-data" "/$v lists its children"
	get /$v/
	is "$code" 200 "/$v/ (trailing slash) too"
done
get /2009-04-04/meta-data/
is "$out" "instance-id
hostname
local-hostname
iqn
plan
facility
tags
operating-system/
public-keys/
public-ipv4
public-ipv6
local-ipv4" "meta-data/ lists its keys, directories with /"
like "$ctype" '^text/plain' "as text/plain"
while read -r key want; do
	get "/2009-04-04/meta-data/$key"
	is "$code $out" "200 $want" "meta-data/$key"
done <<EOF
instance-id i-m1
hostname m1.lab.example
local-hostname m1.lab.example
plan c3.small
facility onprem
public-ipv4 198.51.100.7
local-ipv4 127.0.0.1
public-ipv6 2001:db8::7
operating-system/slug ubuntu_22_04
operating-system/distro ubuntu
operating-system/version 22.04
operating-system/image_tag jammy
public-keys/0 openssh-key
EOF
get /latest/meta-data/tags
is "$out" "rack-1
gpu" "tags, one per line"
get /2009-04-04/meta-data/public-keys/
is "$out" "0=alice@laptop
1=key-1" "public-keys/ in EC2's N=name form"
get /2009-04-04/meta-data/public-keys/1/openssh-key
is "$out" "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ" "the key itself"
get /2009-04-04/meta-data/iqn
is "$code:$out" "200:" "an unset field: 200, empty"
get /2009-04-04/meta-data/operating-system/license_activation/state
is "$code:$out" "200:" "license_activation/state: 200, empty"
get /2009-04-04/user-data
is "$out" "#cloud-config
hostname: m1" "user-data"
get /2009-04-04/vendor-data
is "$out" "#cloud-config
runcmd: [echo vendor]" "vendor-data"
get /2009-04-04/meta-data/nope
is "$code" 404 "an unknown key: 404"
get /2009-04-04/meta-data/public-keys/7/openssh-key
is "$code" 404 "a key index past the end: 404"
get /2009-04-04/meta-data/../user-data
is "$code" 404 "a path with ..: 404"
get /2021-03-23/meta-data/instance-id
is "$code" 404 "another API version: 404 (cloud-init then tries 2009-04-04)"
get /tootles/instanceID/i-m1/2009-04-04/meta-data/hostname
is "$code $out" "200 m1.lab.example" "/tootles/ with this machine's instance id"
get /tootles/instanceID/i-other/2009-04-04/user-data
is "$code" 404 "/tootles/ with another machine's instance id: 404, its data never"
get /2009-04-04/meta-data/hostname -X POST
is "$code" 405 "POST: 405"

# ---- Hegel JSON, NoCloud, Ignition ----

get /metadata
is "$code" 200 "/metadata"
like "$ctype" '^application/json' "as JSON"
is "$out" '{"metadata":{"instance":{"storage":{"disks":[{"device":"/dev/sda","wipe_table":true,"partitions":[{"label":"ROOT","number":1,"size":0}]}]}}}}' \
	"the storage layout"
get /nocloud/meta-data
is "$out" 'instance-id: "i-m1"
local-hostname: "m1.lab.example"
public-keys:
  - "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAA alice@laptop"
  - "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ"' "NoCloud meta-data"
like "$ctype" '^text/yaml' "NoCloud meta-data is YAML"
get /nocloud/network-config
like "$out" '^version: 2' "NoCloud network-config, version 2"
like "$ctype" '^text/yaml' "as YAML"
get /nocloud/user-data
like "$out" '^#cloud-config' "NoCloud user-data"
like "$ctype" '^text/plain' "as it is, text/plain"
get /nocloud/vendor-data
like "$out" 'runcmd: \[echo vendor\]' "NoCloud vendor-data"
get /nocloud/
is "$code" 200 "the /nocloud/ listing"
for f in meta-data user-data vendor-data network-config; do
	like "$out" "^$f\$" "lists $f"
done
get /nocloud/nope
is "$code" 404 "an unknown NoCloud file: 404"
get /latest/meta-data/hostname
is "$code $out" "200 m1.lab.example" "/latest/ is 2009-04-04"
get /latest/user-data
like "$out" '^#cloud-config' "/latest/user-data"
get /ignition/$UUID
is "$code" 404 "Ignition: the user data is cloud-config, not Ignition: 404"

# ---- cloud-init's own code ----

if [ ! -x "$PY" ]; then
	skip "cloud-init's code needs $PY" 6
else
	CI_ROOT=$("$top_srcdir/tools/deb-fetch" cloud-init "$top_builddir/tests/cache/cloud-init" 2>"$IB_TMP/fetch.err")
	if [ -z "$CI_ROOT" ]; then
		diag "$(cat "$IB_TMP/fetch.err")"
		fail "cloud-init is fetched from the Debian archive"
	else
		export PYTHONPATH="$CI_ROOT/usr/lib/python3/dist-packages"
		run "$PY" - "$BASE" <<'EOF'
import json, sys
from cloudinit.sources.helpers import ec2
base = sys.argv[1]
md = ec2.get_instance_metadata(api_version="2009-04-04", metadata_address=base)
ud = ec2.get_instance_userdata(api_version="2009-04-04", metadata_address=base)
print(json.dumps({"md": md, "ud": ud.decode()}, sort_keys=True))
EOF
		is "$rc" 0 "cloud-init's EC2 crawler reads the tree"
		[ "$rc" = 0 ] || diag "$err"
		want='{"md": {"facility": "onprem", "hostname": "m1.lab.example", "instance-id": "i-m1", "iqn": "", "local-hostname": "m1.lab.example", "local-ipv4": "127.0.0.1", "operating-system": {"distro": "ubuntu", "image_tag": "jammy", "license_activation": {"state": ""}, "slug": "ubuntu_22_04", "version": "22.04"}, "plan": "c3.small", "public-ipv4": "198.51.100.7", "public-ipv6": "2001:db8::7", "public-keys": {"alice@laptop": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAA alice@laptop", "key-1": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ"}, "tags": ["rack-1", "gpu"]}, "ud": "#cloud-config\nhostname: m1\n"}'
		is "$out" "$want" "and gets the whole meta-data tree, keys included, and the user-data"

		run "$PY" - "$BASE" <<'EOF'
import json, sys
from cloudinit import util
md, ud, vd = util.read_seeded(sys.argv[1] + "/nocloud/")
print(json.dumps({"md": md, "ud": ud.decode(), "vd": vd.decode()}, sort_keys=True))
EOF
		is "$rc" 0 "cloud-init's NoCloud seed reader reads /nocloud/"
		[ "$rc" = 0 ] || diag "$err"
		is "$out" '{"md": {"instance-id": "i-m1", "local-hostname": "m1.lab.example", "public-keys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAA alice@laptop", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ"]}, "ud": "#cloud-config\nhostname: m1\n", "vd": "#cloud-config\nruncmd: [echo vendor]\n"}' \
			"meta-data, user-data and vendor-data as cloud-init sees them"

		run "$PY" - "$BASE" <<'EOF'
import sys, yaml
from cloudinit import url_helper
from cloudinit.net import network_state, netplan, eni
raw = url_helper.read_file_or_url(sys.argv[1] + "/nocloud/network-config").contents
ns = network_state.parse_net_config_data(yaml.safe_load(raw))
ifs = sorted((i["name"], i.get("type"), i.get("mac_address") or "", str(i.get("vlan_id") or ""),
              ",".join(s.get("address", "") + "/" + str(s.get("prefix", "")) for s in i.get("subnets", [])) or "-")
             for i in ns.iter_interfaces())
for i in ifs:
    print(" ".join(i))
print("dns", ",".join(ns.dns_nameservers), ",".join(ns.dns_searchdomains))
out = netplan.Renderer()._render_content(ns)
assert "macaddress: '52:54:00:12:34:56'" in out, out
assert "via: 127.0.0.253" in out, out
eni.Renderer()._render_interfaces(ns)
print("rendered")
EOF
		is "$rc" 0 "cloud-init's network-config parser accepts network-config"
		[ "$rc" = 0 ] || diag "$err"
		is "$out" "nic0 physical 52:54:00:12:34:56  127.0.0.1/8
nic1 physical 52:54:00:12:34:57  -
nic1.42 vlan  42 172.16.0.9/24
dns 192.0.2.53,192.0.2.54 lab.example
rendered" "interfaces, VLAN, addresses and DNS as cloud-init reads them, rendered by its netplan and ENI renderers"
	fi
fi

# ---- a machine with Ignition ----

cat >"$IB_TMP/ign.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: m1
  namespace: default
  annotations:
    ironbell.dev/system-uuid: $UUID
spec:
  userData: '{"ignition":{"version":"3.4.0"},"storage":{"files":[]}}'
  interfaces:
  - dhcp:
      mac: 52:54:00:12:34:56
      ip: {address: 127.0.0.1, netmask: 255.0.0.0}
EOF
ib apply -f "$IB_TMP/ign.yaml"
get /ignition/$UUID
is "$code" 200 "/ignition/<uuid>: Ignition user data is served"
is "$ctype" application/vnd.coreos.ignition+json "as application/vnd.coreos.ignition+json"
is "$out" '{"ignition":{"version":"3.4.0"},"storage":{"files":[]}}' "verbatim"
get /ignition/$(echo $UUID | tr a-f A-F)
is "$code" 200 "the UUID in capitals is the same machine"
get /ignition/0b7e6c9a-1111-4222-8333-000000000000
is "$code" 404 "another UUID: 404"

# ---- unknown addresses and metrics ----

# 127.0.0.2 is on the loopback interface and no Hardware owns it.
run curl -s --max-time 10 --interface 127.0.0.2 -o /dev/null -w '%{http_code}' "$BASE/2009-04-04/meta-data/hostname"
is "$out" 404 "from an address no Hardware owns: 404"
file_has "$IB_LOG" 'no metadata for 127\.0\.0\.2 \(peer 127\.0\.0\.2\): no Hardware has this address'
is "$?" 0 "and a log line with the address"
run curl -s --max-time 10 --interface 127.0.0.2 -H 'X-Forwarded-For: 127.0.0.99' -o /dev/null \
	-w '%{http_code}' "$BASE/2009-04-04/user-data"
is "$out" 404 "X-Forwarded-For from a peer that is not a trusted proxy is ignored"
run curl -s --max-time 10 "$BASE/metrics"
like "$out" 'ironbell_metadata_unknown_clients_total [2-9]' "unknown clients are counted"
like "$out" 'ironbell_http_requests_total\{listener="public",path="/2009-04-04/meta-data/\{key\}",code="200"\}' \
	"requests by route and status"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
