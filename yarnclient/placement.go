package yarnclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Placement returns where appID's live containers run: node host → number of
// containers (the AM's included). The host is the host part of the YARN node
// id, which is the name Telegraf reports for the node when both use the
// machine's hostname.
//
// It asks the RM's 3.x attempt-containers endpoint for the latest attempt.
// When the RM has no such endpoint (Hadoop 2.x answers 404) it falls back to
// the NodeManagers: GET /ws/v1/node/containers on every node the RM lists with
// containers, keeping those whose container id belongs to appID. A
// NodeManager that cannot be reached is skipped (and logged); the call fails
// only when all of them fail. An app with no attempt yet has an empty
// placement.
func (c *Client) Placement(ctx context.Context, appID string) (map[string]int, error) {
	if err := checkAppID("appID", appID); err != nil {
		return nil, err
	}
	attempts, err := c.AppAttempts(ctx, appID)
	if err != nil {
		return nil, err
	}
	if len(attempts) == 0 {
		return map[string]int{}, nil
	}
	latest := attempts[0]
	for _, a := range attempts[1:] {
		if a.ID > latest.ID {
			latest = a
		}
	}
	if !c.noAttemptContainers.Load() {
		attemptID := latest.AppAttemptID
		if attemptID == "" {
			if attemptID, err = AttemptID(appID, latest.ID); err != nil {
				return nil, err
			}
		}
		cs, err := c.AttemptContainers(ctx, appID, attemptID)
		switch {
		case err == nil:
			out := map[string]int{}
			for _, ct := range cs {
				if strings.EqualFold(ct.ContainerState, "COMPLETE") {
					continue
				}
				node := ct.AssignedNodeID
				if node == "" {
					node = ct.NodeID
				}
				out[NodeHost(node)]++
			}
			return out, nil
		case !errors.Is(err, ErrNotFound):
			return nil, err
		case endpointMissing(err):
			c.noAttemptContainers.Store(true)
			c.log.Info("the RM has no attempt-containers endpoint (Hadoop 2.x); asking NodeManagers for placements from now on")
		default:
			c.log.Info("the RM does not know the attempt's containers; asking NodeManagers", "app", appID, "attempt", attemptID, "err", err)
		}
	}
	all, err := c.placementFromNMs(ctx, map[string]bool{appID: true})
	if err != nil {
		return nil, fmt.Errorf("yarnclient: placement of %s: %w", appID, err)
	}
	return all[appID], nil
}

// Placements is Placement for several applications: appID → node host →
// containers. Apps the RM does not know are left out. On a Hadoop 2.x RM
// every NodeManager is asked once for all of them, instead of once per app.
func (c *Client) Placements(ctx context.Context, appIDs []string) (map[string]map[string]int, error) {
	for i, id := range appIDs {
		if err := checkAppID(fmt.Sprintf("appIDs[%d]", i), id); err != nil {
			return nil, err
		}
	}
	out := make(map[string]map[string]int, len(appIDs))
	rest := map[string]bool{}
	for _, id := range appIDs {
		if c.noAttemptContainers.Load() {
			rest[id] = true
			continue
		}
		p, err := c.Placement(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, err
		}
		out[id] = p
	}
	if len(rest) == 0 {
		return out, nil
	}
	fromNMs, err := c.placementFromNMs(ctx, rest)
	if err != nil {
		return nil, fmt.Errorf("yarnclient: placements: %w", err)
	}
	for id, p := range fromNMs {
		out[id] = p
	}
	return out, nil
}

// endpointMissing tells Jersey's "no resource at this path" 404 (com.sun.jersey
// NotFoundException, "null for uri: ...", or a body that is no
// RemoteException) from the RM's own "attempt not found".
func endpointMissing(err error) bool {
	var re *RemoteError
	if !errors.As(err, &re) {
		return false
	}
	return re.Exception == "" || strings.HasPrefix(re.JavaClassName, "com.sun.jersey") ||
		strings.Contains(re.Message, "null for uri")
}

// placementFromNMs asks every NodeManager the RM lists with containers for
// its containers and counts the live ones of the wanted apps. Every wanted app
// gets an entry, empty when none of its containers was seen.
func (c *Client) placementFromNMs(ctx context.Context, apps map[string]bool) (map[string]map[string]int, error) {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	var targets []Node
	for _, n := range nodes {
		if n.NodeHTTPAddress != "" && n.NumContainers > 0 {
			targets = append(targets, n)
		}
	}
	out := make(map[string]map[string]int, len(apps))
	for id := range apps {
		out[id] = map[string]int{}
	}
	var (
		mu    sync.Mutex
		errs  []error
		wg    sync.WaitGroup
		slots = make(chan struct{}, c.nmConcurrency)
	)
	for _, n := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-slots }()
			cs, err := c.NodeContainers(ctx, n.NodeHTTPAddress)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", n.ID, err))
				return
			}
			for _, ct := range cs {
				app := ct.AppID()
				if !apps[app] || !ct.Live() {
					continue
				}
				node := ct.NodeID
				if node == "" {
					node = n.ID
				}
				out[app][NodeHost(node)]++
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		if len(errs) == len(targets) {
			return nil, fmt.Errorf("no NodeManager answered: %w", errors.Join(errs...))
		}
		c.log.Warn("some NodeManagers did not answer; placement may be partial", "failed", len(errs), "asked", len(targets), "err", errors.Join(errs...))
	}
	return out, nil
}
