#!/bin/sh
# test_provision_kube — test_provision with ironbelld in Kubernetes mode
# (kube.enabled, the Lease held by this one instance) against the
# API-server emulator of tests/kube/, run inside the rig's namespace: the
# Secret, the Machine, the Hardware, the Template and the Workflow are
# created with kubectl, never with ironbell apply, and each state the test
# asserts (the netboot Job's conditions, allowPXE on then off, the
# Machine's powerState, every action's state, the Workflow's state and its
# Booted condition) is read back from the API with kubectl: what
# ironbelld wrote back. Needs kubectl, openssl and curl besides what
# test_provision needs.
PROV_KUBE=1
. "$top_srcdir/tests/e2e/test_provision.sh"
