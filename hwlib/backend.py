"""`hwlib.backend`, the public name of `hwlib.bench.backend` (array module selection and device
information): importing it gives that very module, so its state (the cached choice) is shared."""

import sys

from hwlib.bench import backend as _backend

sys.modules[__name__] = _backend
