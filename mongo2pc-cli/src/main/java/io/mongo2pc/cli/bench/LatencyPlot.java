package io.mongo2pc.cli.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Draws what {@code scripts/bench-latency.sh} measured: throughput against the added latency, one
 * line per client and mode, one chart per thread count (the mean of the rounds at each point).
 * Not a command of the CLI: {@code java -cp mongo2pc.jar io.mongo2pc.cli.bench.LatencyPlot IN.jsonl OUT.png [TITLE]},
 * where each line of IN is one {@code bench --json} object with {@code addedLatencyMs}, {@code finish}
 * and, when several clients ran, {@code client} added.
 */
public final class LatencyPlot {

    private LatencyPlot() { }

    public static void main(String[] args) throws IOException {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: LatencyPlot IN.jsonl OUT.png [TITLE]");
            System.exit(2);
        }
        ObjectMapper mapper = new ObjectMapper();
        // threads -> series name -> latency -> tps of each round
        Map<Integer, Map<String, Map<Double, List<Double>>>> runs = new TreeMap<>((a, b) -> b - a);
        List<String> clients = new ArrayList<>(); // in the order they ran: with two, the first is the old one
        List<String> modes = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            if (!line.startsWith("{")) {
                continue;
            }
            JsonNode run = mapper.readTree(line);
            if (run.get("tps") == null || run.get("addedLatencyMs") == null) {
                continue;
            }
            String name = name(run);
            if (!client(name).isEmpty()) {
                addOnce(clients, client(name));
            }
            addOnce(modes, mode(name));
            runs.computeIfAbsent(run.get("threads").asInt(), t -> new TreeMap<>())
                    .computeIfAbsent(name, n -> new TreeMap<>())
                    .computeIfAbsent(run.get("addedLatencyMs").asDouble(), l -> new ArrayList<>())
                    .add(run.get("tps").asDouble());
        }
        // Two clients (say old and new): a colour per mode, the first client dashed. More: a colour per line.
        boolean byMode = clients.size() <= 2;
        List<LineChart.Panel> panels = new ArrayList<>();
        for (Map.Entry<Integer, Map<String, Map<Double, List<Double>>>> byThreads : runs.entrySet()) {
            List<LineChart.Series> series = new ArrayList<>();
            int color = 0;
            for (Map.Entry<String, Map<Double, List<Double>>> line : byThreads.getValue().entrySet()) {
                List<double[]> points = new ArrayList<>();
                line.getValue().forEach((latency, tps) ->
                        points.add(new double[]{latency, tps.stream().mapToDouble(Double::doubleValue).average().orElse(0)}));
                String name = line.getKey();
                int c = byMode ? modes.indexOf(mode(name)) : color++;
                boolean dashed = byMode && clients.size() == 2 && clients.indexOf(client(name)) == 0;
                series.add(new LineChart.Series(name, LineChart.PALETTE.get(c % LineChart.PALETTE.size()), points, true, dashed));
            }
            int threads = byThreads.getKey();
            panels.add(new LineChart.Panel(threads + (threads == 1 ? " thread" : " threads"),
                    "added round-trip latency (ms)", "transfers per second (log scale)", series, true));
        }
        String title = args.length == 3 ? args[2] : "mongo2pc bench: throughput against added latency";
        LineChart.write(Path.of(args[1]), title, panels);
    }

    private static void addOnce(List<String> list, String item) {
        if (!list.contains(item)) {
            list.add(item);
        }
    }

    /** The client's label of a series name ("" for the yardsticks, which run once). */
    private static String client(String name) {
        int colon = name.indexOf(": ");
        return colon < 0 ? "" : name.substring(0, colon);
    }

    private static String mode(String name) {
        int colon = name.indexOf(": ");
        return colon < 0 ? name : name.substring(colon + 2);
    }

    /** "raw", "tutorial", "library", "library (background)", prefixed by the client's label if there is one. */
    private static String name(JsonNode run) {
        String mode = run.get("mode").asText();
        JsonNode finish = run.get("finish");
        if ("library".equals(mode) && finish != null && "background".equals(finish.asText())) {
            mode = "library (background)";
        }
        JsonNode client = run.get("client");
        return client == null ? mode : client.asText() + ": " + mode;
    }
}
