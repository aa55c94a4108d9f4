"""pgivm's SQL templates, one folder per system and per shared layer (capture, deferred), shipped
in the wheel as ``pgivm.sql``; ``pgivm.systems.common.template`` reads them."""
