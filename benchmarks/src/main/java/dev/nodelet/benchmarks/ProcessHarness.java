package dev.nodelet.benchmarks;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Measure 13: the whole process as an operator sees it. The packaged launcher in node-only mode ({@code --kubeconfig}
 * of the API server in a child JVM, {@code --node}, {@code --no-shell}, its own folders, default options) with pods
 * of that node referencing 0, 1,000 and 5,000 ConfigMaps, created before it starts; beside it a process doing the same
 * job with fabric8 informers ({@link InformerProcess}), on the same JVM flags. Per process: resident set (VmRSS, PSS),
 * heap used and committed, metaspace, code cache and thread stacks (Native Memory Tracking), live threads by name, the
 * time from starting the process to its ready line, and the CPU time it spends over an idle span once its watches are
 * open.
 *
 * <p>System properties: {@value #LAUNCHER} (the launcher jar; default {@code launcher/target/nodelet-launcher.jar}
 * from the repository root or the benchmarks folder), {@value #JVM} (the JVM flags of both processes, space separated;
 * default {@link #DEFAULT_JVM}, the DaemonSet's; empty for the JVM's own defaults), {@value #ENV} (environment
 * variables of both processes, {@code NAME=value} space separated; default {@link #DEFAULT_ENV}, the
 * DaemonSet's; empty for none), {@value #COUNTS} (default
 * {@code 0,1000,5000}), {@value #IDLE} (seconds, default 60) and {@value #BASELINE} ({@code false} to run the launcher
 * alone, for comparing JVM flags; {@code only} for the baseline alone).
 */
final class ProcessHarness {

  static final int MEASURE = 13;

  static final String LAUNCHER = "nodelet.benchmarks.process.launcher";
  static final String JVM = "nodelet.benchmarks.process.jvm";
  static final String COUNTS = "nodelet.benchmarks.process.counts";
  static final String IDLE = "nodelet.benchmarks.process.idle";
  static final String BASELINE = "nodelet.benchmarks.process.baseline";
  static final String ENV = "nodelet.benchmarks.process.env";

  /**
   * The JVM flags a user gets: docs/deploy/daemonset.yaml's JAVA_TOOL_OPTIONS in its 256Mi container, whose memory
   * the JVM would read from its cgroup and here is told with {@code -XX:MaxRAM}, so that the heap is sized from the
   * same percentages (at most 64 MiB, starting at 4).
   */
  static final String DEFAULT_JVM = "-XX:MaxRAM=256m -XX:+UseSerialGC -XX:MinRAMPercentage=25 "
      + "-XX:MaxRAMPercentage=25 -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=20 -XX:TieredStopAtLevel=1 "
      + "-XX:CICompilerCount=1 -XX:-UseNotificationThread -XX:-MethodFlushing -XX:TrimNativeHeapInterval=5000";

  /** The environment a user gets: the DaemonSet's (two glibc malloc arenas instead of up to eight per core). */
  static final String DEFAULT_ENV = "MALLOC_ARENA_MAX=2";

  static final String NODE = "node-a";

  /** The launcher's ready line begins so. */
  static final String READY = "Nodelet ready";

  /** The figures of one process; {@code failure} stands in for them when it did not get ready. */
  record Run(String kind, int objects, long readyMillis, int watches, ProcessProbe.Memory memory,
      Map<String, Integer> threads, double idleCpuSeconds, int idleSeconds, String failure) {

    static Run failed(String kind, int objects, Exception e) {
      return new Run(kind, objects, -1, 0, null, Map.of(), 0, 0, "did not run: " + e);
    }

    /** The figure, or the failure when there are no figures to compute it from. */
    String or(Function<Run, String> figure) {
      return failure != null ? failure : figure.apply(this);
    }
  }

  private ProcessHarness() {
  }

  static List<Row> run(Settings settings) {
    boolean smoke = settings.smoke();
    int[] counts = Arrays.stream(System.getProperty(COUNTS, smoke ? "20" : "0,1000,5000").split(","))
        .map(String::trim).mapToInt(Integer::parseInt).sorted().toArray();
    int idle = Integer.parseInt(System.getProperty(IDLE, smoke ? "1" : "60"));
    String kinds = System.getProperty(BASELINE, "true");
    boolean baseline = !kinds.equals("false");
    boolean launcherToo = !kinds.equals("only");
    List<String> jvm = jvmFlags();
    Path launcher = launcherJar();
    Path logs = settings.jsonDir().resolve("process");
    List<Run[]> runs = new ArrayList<>();
    try (ApiServerProcess server = ApiServerProcess.start()) {
      try (KubernetesClient admin = Watched.client(server)) {
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        int created = 0;
        for (int count : counts) {
          Fixtures.createConfigMaps(admin, created, count - created);
          for (var pod : Fixtures.podsReferencing(created, count - created)) {
            admin.pods().resource(pod).create();
          }
          created = count;
          Run n = !launcherToo ? Run.failed("nodelet", count, new IllegalStateException("not asked for"))
              : measure("nodelet", count, server, jvm, logs, idle, dir -> command(jvm, List.of("-jar",
              launcher.toAbsolutePath().toString(), "--kubeconfig", server.kubeconfig().toString(), "--node", NODE,
              "--no-shell", "--etc", dir.resolve("etc").toString(), "--work", dir.resolve("work").toString(),
              "--run", dir.resolve("run").toString(), "--deploy", dir.resolve("deploy").toString())),
              READY);
          Run b = !baseline ? null : measure("informers", count, server, jvm, logs, idle,
              dir -> command(jvm, List.of("-cp", System.getProperty("java.class.path"),
                  InformerProcess.class.getName(), server.kubeconfig().toString(), NODE)), InformerProcess.READY);
          runs.add(new Run[] {n, b});
          Main.log("process %d objects: %s; baseline %s", count, n, b);
        }
      }
    }
    return rows(runs, jvm, idle);
  }

  private static List<String> jvmFlags() {
    String flags = System.getProperty(JVM, DEFAULT_JVM).trim();
    return flags.isEmpty() ? List.of() : List.of(flags.split(" +"));
  }

  /** {@value #ENV}: {@code NAME=value} pairs, space separated, added to both processes' environment. */
  static Map<String, String> environment() {
    Map<String, String> env = new java.util.LinkedHashMap<>();
    for (String pair : System.getProperty(ENV, DEFAULT_ENV).trim().split(" +")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        env.put(pair.substring(0, eq), pair.substring(eq + 1));
      } else if (!pair.isEmpty()) {
        throw new IllegalArgumentException("-D" + ENV + ": " + pair + " is not NAME=value");
      }
    }
    return env;
  }

  private static List<String> command(List<String> jvm, List<String> rest) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-XX:NativeMemoryTracking=summary");
    command.addAll(jvm);
    command.addAll(rest);
    return command;
  }

  static Path launcherJar() {
    String given = System.getProperty(LAUNCHER);
    List<Path> candidates = given != null ? List.of(Path.of(given))
        : List.of(Path.of("launcher", "target", "nodelet-launcher.jar"),
            Path.of("..", "launcher", "target", "nodelet-launcher.jar"));
    return candidates.stream().filter(Files::isRegularFile).findFirst().orElseThrow(() ->
        new IllegalStateException("no launcher jar at " + candidates + ": build it first (mvn -B -o -q -pl launcher "
            + "-am package -DskipTests) or give its path with -D" + LAUNCHER + "=..."));
  }

  private interface Command {
    List<String> in(Path dir);
  }

  private static Run measure(String kind, int count, ApiServerProcess server, List<String> jvm, Path logs, int idle,
      Command command, String readyLine) {
    Path dir;
    try {
      dir = Files.createTempDirectory("nodelet-process-");
      Files.createDirectories(logs);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Path log = logs.resolve(kind + "-" + count + ".log");
    Process process = null;
    try {
      List<String> line = command.in(dir);
      Main.log("starting %s", String.join(" ", line));
      CountDownLatch ready = new CountDownLatch(1);
      long start = System.nanoTime();
      ProcessBuilder builder = new ProcessBuilder(line).redirectErrorStream(true);
      builder.environment().putAll(environment());
      process = builder.start();
      Process p = process;
      Thread drain = new Thread(() -> drain(p, log, readyLine, ready), "process-output");
      drain.setDaemon(true);
      drain.start();
      while (!ready.await(1, TimeUnit.SECONDS)) {
        if (!process.isAlive()) {
          throw new IllegalStateException(kind + " ended with status " + process.exitValue() + " before it was "
              + "ready; see " + log);
        }
        if (System.nanoTime() - start > TimeUnit.MINUTES.toNanos(10)) {
          throw new IllegalStateException(kind + " not ready after 10 minutes; see " + log);
        }
      }
      long readyMillis = (System.nanoTime() - start) / 1_000_000;
      int watches = awaitWatches(server, count);
      ProcessProbe probe = new ProcessProbe(process.pid());
      double cpuBefore = probe.cpuSeconds();
      FootprintHarness.sleep(idle * 1000L);
      double idleCpu = probe.cpuSeconds() - cpuBefore;
      // threads first: jcmd adds one (the attach listener)
      Map<String, Integer> threads = probe.threads();
      ProcessProbe.Memory memory = probe.memory();
      Files.writeString(logs.resolve(kind + "-" + count + "-nmt.txt"), probe.jcmd("VM.native_memory", "summary")
          + "\n" + probe.jcmd("GC.heap_info") + "\nthreads: " + ProcessProbe.pools(threads) + "\n");
      // the threads' full names and stacks, and the classes per class loader (a bundle each)
      Files.writeString(logs.resolve(kind + "-" + count + "-threads.txt"), probe.jcmd("Thread.print"));
      Files.writeString(logs.resolve(kind + "-" + count + "-classes.txt"),
          ProcessProbe.classesPerLoader(probe.jcmd("VM.classloaders", "show-classes")));
      return new Run(kind, count, readyMillis, watches, memory, threads, idleCpu, idle, null);
    } catch (IOException | RuntimeException e) {
      Main.log("%s at %d objects: %s", kind, count, e);
      return Run.failed(kind, count, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      if (process != null) {
        stop(process);
      }
      delete(dir);
    }
  }

  /**
   * Waits until the server has {@code count} ConfigMap watches open (a watch per referenced object), or their number
   * has not changed for 5 s; returns it.
   */
  private static int awaitWatches(ApiServerProcess server, int count) {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    int last = -1;
    long since = System.nanoTime();
    while (System.nanoTime() < deadline) {
      int watches = server.stats().watches();
      if (watches >= count) {
        return watches;
      }
      if (watches != last) {
        last = watches;
        since = System.nanoTime();
      } else if (System.nanoTime() - since > TimeUnit.SECONDS.toNanos(5)) {
        return watches;
      }
      FootprintHarness.sleep(200);
    }
    return last;
  }

  private static void drain(Process process, Path log, String readyLine, CountDownLatch ready) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
        StandardCharsets.UTF_8)); Writer out = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
      for (String line; (line = in.readLine()) != null; ) {
        if (line.startsWith(readyLine)) {
          ready.countDown();
        }
        out.write(line);
        out.write('\n');
        out.flush();
      }
    } catch (IOException e) {
      // the process ended
    }
  }

  /** SIGTERM (and closes the baseline's input), then kills what has not ended after 30 s. */
  private static void stop(Process process) {
    try {
      process.getOutputStream().close();
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (IOException e) {
      process.destroyForcibly();
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  private static void delete(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      Main.log("cannot delete %s: %s", dir, e);
    }
  }

  static List<Row> rows(List<Run[]> runs, List<String> jvm, int idle) {
    List<Row> rows = new ArrayList<>();
    String flags = (jvm.isEmpty() ? "the JVM's defaults" : String.join(" ", jvm))
        + environment().entrySet().stream().map(e -> " " + e.getKey() + "=" + e.getValue())
            .collect(java.util.stream.Collectors.joining("", environment().isEmpty() ? "" : "; environment", ""));
    for (Run[] r : runs) {
      Run n = r[0];
      Run b = r[1];
      int count = n.objects();
      boolean judged = count == 1000;
      String at = "node-only process, " + count + " watched ConfigMaps";
      rows.add(new Row(MEASURE, at + ": resident set, VmRSS (PSS); JVM flags " + flags,
          n.or(ProcessHarness::rss), baseline(b, ProcessHarness::rss), judged ? "≤ 96 MiB" : "—",
          judged && n.failure() == null ? Row.verdict(n.memory().rss() <= 96 * 1024) : "—"));
      rows.add(new Row(MEASURE, at + ": where it goes (Native Memory Tracking, committed)", n.or(ProcessHarness::where),
          baseline(b, ProcessHarness::where), "—", "—"));
      rows.add(new Row(MEASURE, at + ": live threads, by name", n.or(ProcessHarness::threads),
          baseline(b, ProcessHarness::threads), judged ? "≤ 40" : "—",
          judged && n.failure() == null ? Row.verdict(ProcessProbe.count(n.threads()) <= 40) : "—"));
      rows.add(new Row(MEASURE, at + ": process start → ready line; ConfigMap watches open on the server then",
          n.or(x -> x.readyMillis() + " ms; " + x.watches() + " watches"),
          baseline(b, x -> x.readyMillis() + " ms; " + x.watches() + " watches"), judged ? "≤ 3 s" : "—",
          judged && n.failure() == null ? Row.verdict(n.readyMillis() <= 3000) : "—"));
      rows.add(new Row(MEASURE, at + ": CPU time (user + system) over " + idle + " s idle",
          n.or(x -> Stats.fmt(x.idleCpuSeconds()) + " s"), baseline(b, x -> Stats.fmt(x.idleCpuSeconds()) + " s"),
          "—", "—"));
    }
    rows.add(new Row(MEASURE, "kubelet, a whole node agent: resident set (published figures of the Kubernetes "
        + "project; reference)", "—", "roughly 60–150 MiB", "—", "—"));
    return rows;
  }

  private static String baseline(Run b, Function<Run, String> figure) {
    return b == null ? "—" : b.or(figure);
  }

  private static String rss(Run r) {
    return mib(r.memory().rss()) + " (PSS " + (r.memory().pss() < 0 ? "n/a" : mib(r.memory().pss())) + ")";
  }

  private static String where(Run r) {
    ProcessProbe.Memory m = r.memory();
    // NMT's Metaspace is the classes' metadata, its Class the compressed class space (and the classes' malloc)
    return String.format(Locale.ROOT, "heap %s used / %s committed; metaspace %s (%d classes); symbols %s; CDS "
        + "archive %s; code cache %s; thread stacks %s (%d threads); GC %s; NMT's own %s; NMT total %s",
        mib(m.heapUsed()), mib(m.committed("Java Heap")), mib(m.committed("Metaspace") + m.committed("Class")),
        m.committed("classes"), mib(m.committed("Symbol")), mib(m.committed("Shared class space")),
        mib(m.committed("Code")), mib(m.committed("Thread stacks")), ProcessProbe.count(r.threads()),
        mib(m.committed("GC")), mib(m.committed("Native Memory Tracking")), mib(m.committed("Total")));
  }

  private static String threads(Run r) {
    return ProcessProbe.count(r.threads()) + ": " + ProcessProbe.pools(r.threads());
  }

  private static String mib(long kib) {
    return kib < 0 ? "n/a" : Stats.fmt(kib / 1024.0) + " MiB";
  }
}
