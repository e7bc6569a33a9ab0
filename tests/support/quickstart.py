"""The README's first command: serve the real model locally and run the suite against it.

Runs ``pytest --endpoint URL`` from an empty temporary directory, as a user of the installed
plugin would, and exits with pytest's exit code.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile

from tests.support.server_process import running_server


def main() -> int:
    with (
        running_server("tests.support.model_server") as base_url,
        tempfile.TemporaryDirectory() as empty_dir,
    ):
        endpoint = f"{base_url}/clean"
        print(f"$ pytest --endpoint {endpoint} --expect-dim 384   (in {empty_dir})", flush=True)
        command = [
            sys.executable,
            "-m",
            "pytest",
            "--endpoint",
            endpoint,
            "--expect-dim",
            "384",
            *sys.argv[1:],
        ]
        return subprocess.run(command, cwd=empty_dir).returncode


if __name__ == "__main__":
    sys.exit(main())
