"""Project documents federated into recall: chunking (chunking.py), storing
and deleting (store.py), indexing a folder incrementally (index.py). Recall's
`doc` channel (memory.services.recall.channels) searches the chunks."""
