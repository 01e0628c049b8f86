package yarnclient

import "fmt"

// DecodeNMContainers decodes the body of a NodeManager's GET
// /ws/v1/node/containers (PathNMContainers) for a caller that fetches it
// itself, such as colocd's Telegraf plugin (collector/telegrafplugin);
// Client.NodeContainers fetches and decodes in one call, with this decoder.
//
// It reads every shape the NodeManager writes:
// {"containers":{"container":[...]}}, a one-element list written as a bare
// object, numbers written as strings, and an idle node's {"containers":{}}
// or {"containers":null}, which give no containers and no error. Any other
// body, including one without a "containers" key, fails with an error that
// matches errDecode.
func DecodeNMContainers(body []byte) ([]NMContainer, error) {
	cs, err := decodeNMContainers(body)
	if err != nil {
		return nil, fmt.Errorf("%w: node containers: %w", errDecode, err)
	}
	return cs, nil
}
