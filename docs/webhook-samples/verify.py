# Checks a vinhistory webhook: python3 verify.py (reads the body on stdin; the header and secret from the environment).
import hashlib
import hmac
import os
import sys
import time


def verify_vinhistory_signature(header: str, raw_body: bytes, secret: str, tolerance_seconds: int = 300) -> bool:
    pairs = [part.split("=", 1) for part in header.split(",") if "=" in part]
    timestamps = [value for key, value in pairs if key == "t"]
    signatures = [value for key, value in pairs if key == "v1"]
    if not timestamps or not timestamps[0].isdigit():
        return False
    timestamp = int(timestamps[0])
    if abs(time.time() - timestamp) > tolerance_seconds:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + raw_body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, given) for given in signatures)


if __name__ == "__main__":
    body = sys.stdin.buffer.read()
    ok = verify_vinhistory_signature(os.environ["SIGNATURE"], body, os.environ["WEBHOOK_SECRET"])
    print("valid" if ok else "invalid")
