"""Layer beside the stack: tools for a real account (doctor, kubeconfig). They read the package, never the offline tooling."""
