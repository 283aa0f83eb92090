"""The stand-in suite's HTTP reads, as alice (the generated configuration's user)."""
import base64
import json
import urllib.error
import urllib.request


def Get(port, uri):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (port, uri))
    request.add_header("Authorization", "Basic " + base64.b64encode(b"alice:orthanctest").decode())
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, None
    except OSError:
        return None, None
