#!/usr/bin/env python3
"""colocd_submit: submit a job to colocd and follow it, as an Airflow task would.

The example for submitters in Python (an Airflow operator, a cron job, a
notebook). It needs only Debian's python3-requests and
python3-requests-kerberos, and authenticates as Hadoop's own clients do:

  * Kerberos (SPNEGO) with the ticket cache of the user running it
    (kinit, or the keytab login of an Airflow worker: KRB5CCNAME), the
    server authenticated in return (mutual authentication);
  * or a bearer token of a service account (--token or COLOCD_TOKEN).

Every submission carries an Idempotency-Key: retrying it (a 503 with
Retry-After while leadership moves, a lost connection, a task retried by
Airflow with the same key) never makes a second job. Errors carry a stable
"code" (and a 403 the "rule" that refused it): act on those, not on the
message. The API is described by GET /v1/openapi.json.

  colocd_submit.py --server https://colocd.example.org:8443 submit job.json --key "{{ run_id }}"
  colocd_submit.py follow 01J... --until succeeded,failed,killed,cancelled
  colocd_submit.py list --user alice --state all --limit 100
  colocd_submit.py cancel 01J...

Each command prints JSON on stdout. Exit status: 0 done, 2 usage, 3 the
server refused (its error JSON on stdout), 4 follow timed out.
"""

import argparse
import json
import os
import sys
import time
import uuid

import requests
from requests_kerberos import HTTPKerberosAuth, REQUIRED

TERMINAL = {"succeeded", "failed", "killed", "cancelled"}


class Refused(Exception):
    """A non-2xx answer: status, and the server's {"error","code","field","rule"}."""

    def __init__(self, status, body):
        super().__init__(f"HTTP {status}: {body.get('error', body)}")
        self.status, self.body = status, body


class Colocd:
    """A small colocd client: one session, Kerberos or a token, retries of 503."""

    def __init__(self, server, token=None, ca_file=None, retries=5, timeout=30):
        self.base = server.rstrip("/")
        self.s = requests.Session()
        if token:
            self.s.headers["Authorization"] = "Bearer " + token
        else:
            # The server's reply carries its AP-REP: it is authenticated too.
            self.s.auth = HTTPKerberosAuth(mutual_authentication=REQUIRED)
        if ca_file:
            self.s.verify = ca_file
        self.retries, self.timeout = retries, timeout

    def _call(self, method, path, safe, **kw):
        for attempt in range(self.retries + 1):
            r = self.s.request(method, self.base + path, timeout=self.timeout, **kw)
            if r.status_code == 503 and safe and attempt < self.retries and r.headers.get("Retry-After"):
                time.sleep(min(int(r.headers["Retry-After"]), 60))
                continue
            if r.status_code // 100 != 2:
                try:
                    body = r.json()
                except ValueError:
                    body = {"error": r.text, "code": ""}
                raise Refused(r.status_code, body)
            return r

    def submit(self, job, key):
        """POST /v1/jobs with an Idempotency-Key: 201 new, 200 the same job again."""
        r = self._call("POST", "/v1/jobs", True, json=job, headers={"Idempotency-Key": key})
        return r.status_code, r.json()

    def job(self, job_id):
        return self._call("GET", "/v1/jobs/" + job_id, True).json()

    def cancel(self, job_id):
        return self._call("DELETE", "/v1/jobs/" + job_id, False).json()

    def jobs(self, limit=100, **filters):
        """Every job the filters select, a page at a time (next_cursor)."""
        params = {k: v for k, v in filters.items() if v}
        params["limit"] = limit
        while True:
            page = self._call("GET", "/v1/jobs", True, params=params).json()
            yield from page["jobs"]
            if not page.get("next_cursor"):
                return
            params["cursor"] = page["next_cursor"]

    def follow(self, job_id, until=TERMINAL, every=2.0, timeout=3600):
        """Poll the job until its state is one of until; yields each state seen."""
        deadline, last = time.monotonic() + timeout, None
        while True:
            j = self.job(job_id)
            if j["state"] != last:
                last = j["state"]
                yield j
            if j["state"] in until:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {last} after {timeout}s")
            time.sleep(every)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default=os.environ.get("COLOCD_SERVER", "http://127.0.0.1:8080"))
    p.add_argument("--token", default=os.environ.get("COLOCD_TOKEN"), help="a service account's token; default: Kerberos")
    p.add_argument("--ca-file", help="the CA bundle of the server's certificate")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("submit", help="submit a job file (JSON, the API's shape)")
    s.add_argument("file")
    s.add_argument("--key", help="Idempotency-Key (default: a new one; pass Airflow's run id to make retries safe)")
    f = sub.add_parser("follow", help="follow a job until a state")
    f.add_argument("id")
    f.add_argument("--until", default=",".join(sorted(TERMINAL)))
    f.add_argument("--every", type=float, default=2.0)
    f.add_argument("--timeout", type=float, default=3600)
    ls = sub.add_parser("list", help="list jobs, following every page")
    for name in ("state", "user", "queue", "kind", "since"):
        ls.add_argument("--" + name)
    ls.add_argument("--label", action="append", default=[])
    ls.add_argument("--limit", type=int, default=100, help="jobs a page")
    c = sub.add_parser("cancel", help="cancel or kill a job")
    c.add_argument("id")
    a = p.parse_args(argv)

    cl = Colocd(a.server, token=a.token, ca_file=a.ca_file)
    try:
        if a.cmd == "submit":
            with open(a.file) as fh:
                job = json.load(fh)
            status, j = cl.submit(job, a.key or "py-" + uuid.uuid4().hex)
            print(json.dumps({"status": status, "job": j}))
        elif a.cmd == "follow":
            for j in cl.follow(a.id, set(a.until.split(",")), a.every, a.timeout):
                print(json.dumps({"id": j["id"], "state": j["state"], "app_id": j.get("app_id", "")}), flush=True)
        elif a.cmd == "list":
            jobs = list(cl.jobs(a.limit, state=a.state, user=a.user, queue=a.queue, kind=a.kind, since=a.since,
                                label=a.label or None))
            print(json.dumps({"count": len(jobs), "ids": [j["id"] for j in jobs]}))
        elif a.cmd == "cancel":
            print(json.dumps(cl.cancel(a.id)))
    except Refused as e:
        print(json.dumps({"status": e.status, **e.body}))
        return 3
    except TimeoutError as e:
        print(json.dumps({"error": str(e)}))
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
