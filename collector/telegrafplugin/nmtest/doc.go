// Package nmtest is a fake YARN NodeManager and ResourceManager for the
// plugin's tests: one httptest server on 127.0.0.1 answering
// /ws/v1/node/containers (NodeManager) and /ws/v1/cluster/apps/<id>
// (ResourceManager) with the JSON shapes documented in NodeManagerRest.md
// and ResourceManagerRest.md; its containers are yarnclient.NMContainer
// values. It records ResourceManager lookups and can fail on demand. It must not be imported by production code.
package nmtest
