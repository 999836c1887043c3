"""``python -m training.rllib --config configs/rllib/<name>.yaml [--set key=value ...] [--address HOST:PORT]``."""

from training.rllib.cli import main

if __name__ == "__main__":
    main()
