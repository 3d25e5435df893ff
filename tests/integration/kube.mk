# The Kubernetes API-server emulator of tests/kube/ (apiserver_emu.py with
# kinds.py and kstore.py, standard library only, run by /usr/bin/python3),
# proven with the real clients kubectl and python3-kubernetes over TLS
# with a client certificate and with a bearer token (test_kube_emu).
# Needs kubectl, openssl and curl (python3-kubernetes for its part); the
# test skips without them.
KUBE_EMU_TESTS = \
	tests/integration/test_kube_emu.sh
TESTS += $(KUBE_EMU_TESTS)
EXTRA_DIST += $(KUBE_EMU_TESTS) \
	tests/kube/apiserver_emu.py \
	tests/kube/kinds.py \
	tests/kube/kstore.py \
	tests/kube/kube_client_check.py \
	tests/kube/emu.sh
