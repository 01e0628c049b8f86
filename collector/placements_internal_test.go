package collector

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// checkPlacements fails t unless every placement is a well-formed summary
// of samples in [from, to).
func checkPlacements(t *testing.T, ps []Placement, from, to time.Time, input string) {
	t.Helper()
	for _, p := range ps {
		ok := p.Host != "" && p.AppID != "" && p.Samples > 0 && !p.First.After(p.Last) &&
			!p.First.Before(from) && p.Last.Before(to) && p.Containers > 0 && !math.IsInf(p.Containers, 0)
		if !ok {
			t.Fatalf("placement %+v from %q: not a summary of samples in the window", p, input)
		}
	}
}

// FuzzDecodePlacements: any Flux answer decodes or fails, never panics,
// and every placement it yields summarises samples in the window.
func FuzzDecodePlacements(f *testing.F) {
	const header = ",result,table,_start,_stop,_time,_value,_field,_measurement,application_id,application_type,host,kind,queue\n"
	f.Add(header +
		",containers,0,x,x,2024-03-01T12:00:00Z,2,containers,yarn_containers,application_1_0001,MAPREDUCE,a,sort,default\n" +
		",containers,0,x,x,2024-03-01T12:00:10Z,3,containers,yarn_containers,application_1_0001,,a,,\n" +
		",result,table,_start,_stop,_time,_value,_field,_measurement,application_id,host\n" +
		",names,0,x,x,2024-03-01T12:00:10Z,etl,application_name,yarn_containers,application_1_0001,a\n")
	f.Add(header + ",containers,0,x,x,2024-03-01T12:00:05Z,NaN,containers,yarn_containers,application_1_0002,,a,,\n")
	f.Add(header + ",containers,0,x,x,2024-03-01T12:00:05Z,+Inf,containers,yarn_containers,application_1_0002,,a,,\n")
	f.Add(",error,reference\n,boom,\n")
	f.Add("\"unterminated")
	f.Add(",result,table,_time,_value,\n,,") // a row shorter than its header
	from := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	c, err := New(DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		acc := newPlacementAcc(from, to)
		if err := c.decodePlacements(strings.NewReader(body), acc); err != nil {
			return
		}
		checkPlacements(t, acc.result(), from, to, body)
	})
}

// FuzzDecodeInfluxQLPlacements: the same for InfluxQL's JSON answers.
func FuzzDecodeInfluxQLPlacements(f *testing.F) {
	f.Add(`{"results":[{"statement_id":0,"series":[{"name":"yarn_containers","tags":{"host":"a","application_id":"application_1_0001","kind":"sort"},` +
		`"columns":["time","containers"],"values":[[1709294400000000000,2],[1709294410000000000,4]]}]},` +
		`{"statement_id":1,"series":[{"name":"yarn_containers","tags":{"host":"a","application_id":"application_1_0001"},` +
		`"columns":["time","application_name"],"values":[[1709294400000000000,"etl"]]}]}]}`)
	f.Add(`{"results":[{"series":[{"name":"m","tags":{"host":"a","application_id":"x"},"columns":["time","containers"],"values":[["2024-03-01T12:00:01Z",1e308]]}]}]}`)
	f.Add(`{"results":[{"error":"database not found"}]}`)
	f.Add(`{"results":[{"series":[{"columns":["time"],"values":[[1]]}]}]}`)
	from := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	c, err := New(DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		acc := newPlacementAcc(from, to)
		err := decodeInfluxQL(strings.NewReader(body), maxValueBytes, func(st influxQLSeries) error { return c.decodeInfluxQLPlacements(st, acc) })
		if err != nil {
			return
		}
		checkPlacements(t, acc.result(), from, to, body)
	})
}

// TestDecodePlacementsMerges: one application's samples, some written
// without the RM's answer, merge into one placement with its tags; the
// newest name wins; samples outside the window or without containers do
// not count.
func TestDecodePlacementsMerges(t *testing.T) {
	from := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	body := ",result,table,_time,_value,host,application_id,kind,application_type,queue\n" +
		",containers,0,2024-03-01T12:00:20Z,1,a,app_2,,,\n" + // out of order, tags missing
		",containers,0,2024-03-01T12:00:10Z,3,a,app_2,sort,MAPREDUCE,default\n" +
		",containers,0,2024-03-01T12:00:30Z,0,a,app_2,sort,MAPREDUCE,default\n" + // no containers
		",containers,0,2024-03-01T12:01:00Z,9,a,app_2,sort,MAPREDUCE,default\n" + // at to
		",containers,0,2024-03-01T12:00:15Z,1,,app_3,,,\n" + // no host
		",result,table,_time,_value,host,application_id\n" +
		",names,0,2024-03-01T12:00:20Z,new,a,app_2\n" +
		",names,0,2024-03-01T12:00:10Z,old,a,app_2\n"
	c, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	acc := newPlacementAcc(from, from.Add(time.Minute))
	if err := c.decodePlacements(strings.NewReader(body), acc); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(acc.result())
	want := `[{"Host":"a","AppID":"app_2","Kind":"sort","Type":"MAPREDUCE","Queue":"default","Name":"new",` +
		`"First":"2024-03-01T12:00:10Z","Last":"2024-03-01T12:00:20Z","Samples":2,"Containers":2}]`
	if string(got) != want {
		t.Errorf("placements\n got %s\nwant %s", got, want)
	}
}
