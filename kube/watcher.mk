# kube/watcher: see kube/local.mk.
