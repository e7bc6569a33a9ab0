import sys

from conformance.server.main import main

sys.exit(main())
