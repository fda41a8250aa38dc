"""Reading a model: the file, its external data, its checks, its functions and the data a caller gives."""
