"""The offline evaluation: the program under mocks or an emulated AWS account, and the stack files as the Pulumi CLI reads them."""
