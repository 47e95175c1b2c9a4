# Checks a vinhistory report: python3 verify-report.py <report link or saved .json file> <service URL>
# Prints "genuine <digest>" and exits 0, or "not genuine: <why>" and exits 1. Needs cryptography.
import base64
import hashlib
import json
import re
import sys
import urllib.parse
import urllib.request

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def envelope_of(source):
    if not re.match(r"^https?://", source):
        with open(source, encoding="utf-8") as file:
            return json.load(file)
    # The signed snapshot is the report's address with .json (a reseller's address works too).
    url = urllib.parse.urlsplit(source)
    path = re.sub(r"\.(pdf|json)$", "", url.path) + ".json"
    return get_json(urllib.parse.urlunsplit((url.scheme, url.netloc, path, "", "")))


def verify(source, service):
    envelope = envelope_of(source)
    issuer = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(service))
    header_b64, payload_b64, signature_b64 = envelope["signature"].split(".")
    header = json.loads(b64url(header_b64))
    if header.get("alg") != "EdDSA":
        raise ValueError("not an EdDSA signature")
    # The keys come from the service you trust, never from the report itself.
    keys = {key["kid"]: key for key in get_json(issuer + "/.well-known/jwks.json")["keys"]}
    jwk = keys.get(header.get("kid"))
    if jwk is None or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        raise ValueError("signed with a key the service does not publish")
    try:
        Ed25519PublicKey.from_public_bytes(b64url(jwk["x"])).verify(b64url(signature_b64), (header_b64 + "." + payload_b64).encode("ascii"))
    except InvalidSignature:
        raise ValueError("the signature does not match the signed bytes")
    if header.get("iss") != issuer:
        raise ValueError("signed by {}, not {}".format(header.get("iss"), issuer))
    payload = b64url(payload_b64)
    # The signature covers the payload's bytes; the envelope's report must say exactly the same.
    if json.loads(payload) != envelope["report"]:
        raise ValueError("the report differs from what was signed")
    return hashlib.sha256(payload).hexdigest()[:16]


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: python3 verify-report.py <report link or saved .json file> <service URL>", file=sys.stderr)
        sys.exit(2)
    try:
        print("genuine " + verify(sys.argv[1], sys.argv[2]))
    except Exception as error:  # noqa: BLE001 - every failure is "not genuine", with its reason
        print("not genuine: {}".format(error))
        sys.exit(1)
