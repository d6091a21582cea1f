"""`python -m teton.cli ...` runs `teton ...`."""

from teton.cli.app import main

if __name__ == "__main__":
    main()
