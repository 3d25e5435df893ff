"""tinkproto — the Python stubs of common/tink.proto, generated when a test
runs (never committed) with python3-grpc-tools, and imported.

    import tinkproto
    pb, pb_grpc = tinkproto.load()          # a fresh directory of stubs
    pb, pb_grpc = tinkproto.load("/some/dir")

The stubs come from the same .proto that protoc-c compiles for ironbelld,
so a client built on them speaks exactly what the server was built for.
google/protobuf/timestamp.proto is read from common/ by protoc, and at run
time the generated code imports python3-protobuf's own timestamp_pb2 (the
same file name, the same message), which is what a grpc-go or grpc-js
peer sends.

Run only under /usr/bin/python3: python3-grpcio and python3-grpc-tools are
Debian packages, installed for the system interpreter.
"""

import atexit
import importlib
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def proto_dir():
    """common/ of the source tree ($top_srcdir when make check runs us)."""
    top = os.environ.get("top_srcdir") or os.path.dirname(os.path.dirname(HERE))
    return os.path.join(os.path.abspath(top), "common")


def generate(out_dir):
    """Writes tink_pb2.py and tink_pb2_grpc.py into out_dir; raises
    RuntimeError when protoc fails."""
    from grpc_tools import protoc

    src = proto_dir()
    os.makedirs(out_dir, exist_ok=True)
    args = [
        "grpc_tools.protoc",
        "-I",
        src,
        "--python_out",
        out_dir,
        "--grpc_python_out",
        out_dir,
        os.path.join(src, "tink.proto"),
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("grpc_tools.protoc failed on %s/tink.proto" % src)


def fresh(out_dir):
    """Whether out_dir holds stubs newer than tink.proto (made once by a
    test, then shared by its clients and servers)."""
    try:
        src = os.path.getmtime(os.path.join(proto_dir(), "tink.proto"))
        return all(
            os.path.getmtime(os.path.join(out_dir, f)) >= src for f in ("tink_pb2.py", "tink_pb2_grpc.py")
        )
    except OSError:
        return False


def load(out_dir=None):
    """Generates the stubs (into out_dir, or a temporary directory removed
    at exit) unless out_dir holds fresh ones, and returns the modules
    (tink_pb2, tink_pb2_grpc)."""
    if out_dir is None:
        out_dir = tempfile.mkdtemp(prefix="tinkproto.")
        atexit.register(shutil.rmtree, out_dir, True)
    if not fresh(out_dir):
        generate(out_dir)
    if out_dir not in sys.path:
        sys.path.insert(0, out_dir)
    pb = importlib.import_module("tink_pb2")
    pb_grpc = importlib.import_module("tink_pb2_grpc")
    return pb, pb_grpc


if __name__ == "__main__":
    # tinkproto.py DIR: generate the stubs into DIR and say where.
    d = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tinkproto.")
    generate(d)
    print(d)
