import sys

from hwlib.cli import main

sys.exit(main())
