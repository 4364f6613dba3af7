"""One module per paper (`paper003.py`, ...) registering its checks with `commaware.reproduce.check`."""
