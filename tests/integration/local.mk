# integration tests
