package server

import (
	"cmp"
	"slices"

	"cclab/web"
	"fmt"
	"math"
	"strings"
)

// The home page is ordered for a newcomer: the library in topics (the
// seed papers first, the classics last), light scenarios first within a
// topic, each card saying what to look for and about how long it takes.

// topic is one group of library cards, by scenario name prefix.
type topic struct {
	title, intro string
	prefixes     []string
}

// topics are the home page's groups in order; a library scenario no
// prefix names goes to the last, the classics.
var topics = []topic{
	{"MPCC: model-predictive congestion control", "Each sender predicts the switch queue from in-band telemetry and plans its window by solving a small optimisation on every ACK.",
		[]string{"mpcc-", "fattree16-", "dumbbell-4to1-none"}},
	{"FDCC: congestion control learned by deep reinforcement learning", "A neural policy trained offline sets each sender's rate from what it measures.",
		[]string{"fdcc-"}},
	{"RCC: receiver-driven congestion control", "The receiver tells each sender its window, and tells apart congestion at its own link from congestion inside the network.",
		[]string{"rcc-"}},
	{"QCN: stability of a feedback loop", "When does a congestion-control loop settle, and when does it oscillate? QCN's averaging against plain AIMD.",
		[]string{"qcn-"}},
	{"Dolce-RC: DCQCN tuned online by a bandit", "Each flow tries DCQCN settings and keeps those that cause the fewest congestion marks.",
		[]string{"dolce"}},
	{"Classics and baselines", "DCQCN, HPCC and no congestion control on the textbook settings: incast, fairness, all-to-all.",
		nil},
}

// topicOf is the index in topics of a library scenario.
func topicOf(name string) int {
	for i, t := range topics {
		for _, p := range t.prefixes {
			if strings.HasPrefix(name, p) {
				return i
			}
		}
	}
	return len(topics) - 1
}

// lookFor says what to watch in each library scenario, in plain words (a
// scenario not listed shows none).
var lookFor = map[string]string{
	"dumbbell-4to1-none":              "With no congestion control, four senders pile into one link: watch the queue grow in a straight line.",
	"mpcc-exp1":                       "The queue from the burst at the start drains in about 150 µs and then stays near empty.",
	"mpcc-exp1-literal":               "With the window the thesis prints (eight times larger), the queue no longer empties: compare with the first experiment.",
	"mpcc-exp1-1ms":                   "With 1 ms links the sender sees the queue 6 ms late: compare the true queue with what the telemetry reports and what the model predicts.",
	"mpcc-exp2":                       "Four flows join one by one: each newcomer gets its share quickly and the queue stays small.",
	"fattree16-websearch30":           "No congestion control on a small data centre: the baseline for how long flows take when nothing manages the queues.",
	"mpcc-exp3-websearch30":           "Web-search traffic at 30% load: the queues over all switches and how much longer flows take than on an empty network.",
	"mpcc-exp3-websearch60":           "The same at 60% load: queues and flow times grow; compare with 30%.",
	"mpcc-exp3-fbhadoop30":            "Hadoop traffic (many small flows) at 30% load: queues and flow completion times.",
	"mpcc-exp3-fbhadoop60":            "Hadoop traffic at 60% load: compare with 30%.",
	"mpcc-exp3-websearch30-incast":    "Web-search traffic plus a burst of eight senders into one host every millisecond: watch that host's queue spike and recover.",
	"mpcc-exp3-websearch60-incast":    "The same bursts on a busier network (60% load).",
	"mpcc-exp3-fbhadoop30-incast":     "Hadoop traffic plus repeated eight-to-one bursts: the bursts' queue spikes.",
	"mpcc-exp3-fbhadoop60-incast":     "Hadoop traffic at 60% plus repeated bursts.",
	"fdcc-longshort":                  "A short flow joins a long one: does it get half the link at once and finish by about 1.5 ms?",
	"fdcc-dumbbell-4to1":              "Four senders share one link: the queue and whether the four flows get equal shares.",
	"fdcc-dumbbell-16to1":             "Sixteen senders into one link: the queue (the thesis: about 31 KB under FDCC against 135 KB under DCQCN).",
	"fdcc-join4":                      "Four long flows join every 35 ms: each should get an equal share soon after it joins.",
	"fdcc-fattree-48to1":              "A 48-to-1 burst across a small data centre: the receiver's queue and the flows' rates.",
	"fdcc-fattree-192to1":             "A 192-to-1 burst: a larger fan-in, a deeper queue to drain.",
	"fdcc-fattree-768to1":             "A 768-to-1 burst: the largest fan-in of the thesis.",
	"fdcc-dumbbell-256to1":            "256 senders into one link: the queue at scale.",
	"fdcc-dumbbell-1024to1":           "1024 senders into one link: the queue at the largest scale (a long run).",
	"fdcc-fattree-websearch":          "Web-search traffic across the data centre: flow completion times by flow size.",
	"fdcc-fattree-fbhadoop":           "Hadoop traffic across the data centre: flow completion times by flow size.",
	"rcc-fairness-4flows":             "Four flows join 1 ms apart: each newcomer gets its equal share on the next acknowledgement.",
	"rcc-multibottleneck":             "Congestion inside the network and at a receiver at once: RCC tells them apart and reacts to each.",
	"rcc-incast-256to1":               "256 senders into one receiver: the receiver paces them, so its queue stays short.",
	"rcc-fattree320-websearch":        "Web-search traffic on a 320-host data centre: flow completion times at scale.",
	"qcn-averaging-350us":             "With a long feedback loop, QCN's averaging keeps the link busy: compare with the AIMD scenario.",
	"qcn-aimd-350us":                  "The same loop without averaging: the queue empties and the link idles in cycles.",
	"qcn-buffer-qcn":                  "QCN with a small buffer keeps the link full where TCP cannot.",
	"qcn-buffer-tcp":                  "TCP with a one-BDP buffer: the sawtooth and the link utilisation it loses.",
	"dolce-incast-repeat":             "Sixteen senders burst into one host every 500 µs: watch which DCQCN settings the bandit picks.",
	"dolceplus-dumbbell":              "Flows of different sizes join over time: how quickly the newcomers get their share.",
	"dolce-alltoall-ppn16":            "An MPI all-to-all exchange: how long the whole exchange takes.",
	"dolce-alltoall-ppn40":            "The paper's largest all-to-all (a very long run).",
	"dolce-fattree8-cachefollower30":  "Cache-follower traffic on a 128-host data centre: which settings the bandit learns, and flow times.",
	"dolce-fattree8-cachefollower50":  "The same at 50% load: the bandit's choices and rewards.",
	"dolce-fattree8-datamining30":     "Data-mining traffic (few tiny flows and some elephants): a smaller gain than on cache-follower traffic.",
	"dolce-fattree8-datamining50":     "Data-mining traffic at 50% load.",
	"dolce-fattree16-cachefollower30": "The paper's 1024-host setting at 30% load (a long run).",
	"dolce-fattree16-cachefollower50": "The paper's 1024-host setting at 50% load (a long run).",
	"dolce-fattree16-datamining30":    "The paper's 1024-host setting, data-mining traffic (a long run).",
	"dolce-fattree16-datamining50":    "The paper's 1024-host setting, data-mining traffic at 50% (a long run).",
	"incast-8to1":                     "Eight senders at once with no congestion control: the burst piles up in the receiver's port.",
	"incast-16to1-dcqcn":              "Sixteen senders under DCQCN: the queue settles between the marking thresholds and the rates share the link.",
	"fairness-2flows-hpcc":            "A second flow joins: HPCC hands it half the link within a few round trips and keeps the queue near empty.",
	"leafspine-alltoall-none":         "An all-to-all exchange on a leaf-spine: the traffic spreads over both spines.",
	"fattree1024-permutation-hpcc":    "Every one of 1024 hosts sends to another at once: the engine at scale.",
}

// aboutHowLong says how long a run is expected to take, in the words a
// card uses ("about 2 s", "about 3 min").
func aboutHowLong(seconds float64) string {
	switch {
	case seconds < 1:
		return "under a second"
	case seconds < 90:
		return fmt.Sprintf("about %.0f s", math.Ceil(seconds))
	case seconds < 90*60:
		return fmt.Sprintf("about %.0f min", math.Round(seconds/60))
	}
	return fmt.Sprintf("about %.0f h", math.Round(seconds/3600))
}

// libraryTopics groups the library's cards by topic, lightest first.
func libraryTopics(lib []web.Card) []web.Topic {
	out := make([]web.Topic, len(topics))
	for i, t := range topics {
		out[i] = web.Topic{Title: t.title, Intro: t.intro}
	}
	for _, c := range lib {
		i := topicOf(c.Library)
		out[i].Cards = append(out[i].Cards, c)
	}
	for i := range out {
		slices.SortStableFunc(out[i].Cards, func(a, b web.Card) int { return cmp.Compare(a.Wall, b.Wall) })
	}
	return slices.DeleteFunc(out, func(t web.Topic) bool { return len(t.Cards) == 0 })
}
