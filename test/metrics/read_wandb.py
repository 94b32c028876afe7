"""Reads the history rows of an offline W&B run in RUN_DIR/wandb/ from its .wandb file (a LevelDB-log
framed stream of wandb_internal.proto Records, as wandb-core writes it); prints them as JSON."""
import glob
import json
import struct
import sys

from wandb.proto import wandb_internal_pb2 as pb

def records(path):
    """The protobuf records of a .wandb file: a 7-byte header, then LevelDB log blocks of 32 KiB."""
    data = open(path, "rb").read()
    assert data[:4] == b":W&B", data[:7]
    pos, buf, block = 7, b"", 32768
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if length == 0 and kind == 0:
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind == 1: yield chunk
        elif kind == 2: buf = chunk
        elif kind == 3: buf += chunk
        elif kind == 4: yield buf + chunk

f = glob.glob(sys.argv[1] + "/wandb/offline-run-*/run-*.wandb")[0]
hist = []
for d in records(f):
    r = pb.Record(); r.ParseFromString(d)
    if r.WhichOneof("record_type") == "history":
        hist.append({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item})
print(json.dumps(hist))
