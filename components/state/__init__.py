"""The typed state a cluster's update leaves for the next (model.py), every older shape of it
(migrations.py), and reading it back from the engine (io.py)."""
