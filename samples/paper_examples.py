"""The paper's worked examples with their checks (the same as `python -m xslit.demo`)."""

from xslit.demo import main

if __name__ == "__main__":
    raise SystemExit(main())
