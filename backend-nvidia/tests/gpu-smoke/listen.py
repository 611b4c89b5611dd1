"""Listen on a Unix socket for the tool's events (JSON lines) and write
each with its arrival time (ms since the epoch) to a file."""
import json, os, socket, sys, time

path, dest = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(4)
srv.settimeout(60)
conn, _ = srv.accept()
buf = b""
with open(dest, "w") as f:
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            ev = json.loads(line)
            ev["_arrived_ms"] = int(time.time() * 1000)
            f.write(json.dumps(ev) + "\n")
            f.flush()
