package kdctest

// Names the external tests use.

// DefaultRealm is defaultRealm.
const DefaultRealm = defaultRealm

// Realm is realm.
var Realm = realm
