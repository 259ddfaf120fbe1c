"""Day-2 judgement: what the last update left running (components/state), what runs now (the cluster as read,
or the user's confirmations), and what an update may change: versions, etcd membership, confirmations."""
