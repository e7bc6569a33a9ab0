import sys

from conformance.server.main import main

if __name__ == "__main__":  # importable, e.g. to see what the server's process loads
    sys.exit(main())
