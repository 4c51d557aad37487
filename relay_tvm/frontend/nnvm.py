def from_nnvm(*a, **k):
    raise NotImplementedError
