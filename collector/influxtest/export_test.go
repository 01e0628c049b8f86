package influxtest

// Names the external tests use.

// Database is database.
const Database = database
