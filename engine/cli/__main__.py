"""``python -m docray.engine.cli``: the same as the ``docray`` console script."""
from docray.engine.cli import main

if __name__ == "__main__":
    main()
