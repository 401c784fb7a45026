package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.kube.internal.KubeClientFactory;
import dev.nodelet.kube.internal.KubeSettings;
import dev.nodelet.kube.watch.ReflectorException;
import dev.nodelet.kube.watch.ReflectorListener;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restarts that wait in the client's HTTP/2 pool for a session (every connection went with the API server) pass the
 * restart bucket when their streams start: once the sessions are ready they leave no faster than the bucket, not
 * together; and while the server is away, restarts that cannot connect take no start from it. Real TLS, real HTTP/2
 * sessions against the embedded server, the engine's own bucket.
 */
class HeldRestartsTest {

  private static final long SECOND = 1_000_000_000L;
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int WATCHES = 300; // three sessions' worth at the server's 100 streams
  private static final double RATE = 200;
  private static final int BURST = 10;

  @TempDir
  Path dir;

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private final List<Watch> watches = new ArrayList<>();

  @AfterEach
  void stop() {
    watches.forEach(Watch::cancel);
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void restartsHeldForASessionStartNoFasterThanTheBucket() {
    server = EmbeddedApiServer.builder().tls().build().start();
    client = new KubeClientFactory().create(KubeSettings.builder()
        .kubeconfig(server.writeKubeconfig(dir.resolve("kubeconfig")).toString()).nodeName("node-a").build());
    Recorded gate = new Recorded(new RestartLimiter(RATE, BURST, System::nanoTime, new Random(5)::nextDouble));
    HttpClient http = client.getHttpClient();

    // no session yet: every request waits for the pool's handshakes, as after an outage
    for (int i = 0; i < WATCHES; i++) {
      Watch watch = new Watch(gate);
      watches.add(watch);
      http.consumeBytes(http.newHttpRequestBuilder().uri(server.url() + "/api/v1/namespaces/ns-" + i
          + "/configmaps?watch=true").forStreaming().build(), watch)
          .thenAccept(answer -> answer.body().consume());
    }
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == WATCHES);

    long[] starts = gate.starts();
    assertThat(starts).hasSize(WATCHES);
    // the bucket's promise over the starts made: burst + rate * w, one interval more for a reservation's jitter
    for (double window : new double[] {0.01, 0.1, 0.5, 1}) {
      assertThat(RestartLimiterTest.most(starts, (long) (window * SECOND))).as("starts within %s s", window)
          .isLessThanOrEqualTo((int) (BURST + RATE * window + 2));
    }
    assertThat(starts[WATCHES - 1] - starts[0]).as("from the first start to the last")
        .isGreaterThanOrEqualTo((long) ((WATCHES - BURST - 2) / RATE * SECOND));
    // held requests are dispatched again when the bucket allows, not polled: about one refusal per start
    assertThat(gate.limiter.refused()).isLessThan(2L * WATCHES);
  }

  @Test
  void aFirstOpeningDoesNotWaitBehindHeldRestarts() {
    server = EmbeddedApiServer.builder().tls().build().start();
    client = new KubeClientFactory().create(KubeSettings.builder()
        .kubeconfig(server.writeKubeconfig(dir.resolve("kubeconfig")).toString()).nodeName("node-a").build());
    // a slow bucket: the restarts take about 4 s, whatever else the machine is doing
    Recorded gate = new Recorded(new RestartLimiter(25, BURST, System::nanoTime, new Random(5)::nextDouble));
    HttpClient http = client.getHttpClient();
    int count = 101;
    CompletableFuture<Long> firstOpened = new CompletableFuture<>();
    for (int i = 0; i < count; i++) {
      boolean first = i == count - 1; // behind every held restart
      Watch watch = new Watch(first ? null : gate);
      watches.add(watch);
      http.consumeBytes(http.newHttpRequestBuilder().uri(server.url() + "/api/v1/namespaces/ns-" + i
          + "/configmaps?watch=true").forStreaming().build(), watch)
          .thenAccept(answer -> {
            if (first) {
              firstOpened.complete(System.nanoTime());
            }
            answer.body().consume();
          });
    }
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == count);
    long[] starts = gate.starts();
    assertThat(starts).hasSize(count - 1);
    // the first opening had its answer before half of the restarts had started
    assertThat(firstOpened.join()).isLessThan(starts[starts.length / 2]);
  }

  @Test
  void restartsThatCannotConnectTakeNoStartAndResumeOnceTheServerIsBack() {
    server = EmbeddedApiServer.builder().tls().build().start();
    client = new KubeClientFactory().create(KubeSettings.builder()
        .kubeconfig(server.writeKubeconfig(dir.resolve("kubeconfig")).toString()).nodeName("node-a").build());
    int count = 50;
    Engine engine = new Engine(client, EngineSettings.builder().restartRate(RATE).restartBurst(BURST)
        .backoff(Duration.ofMillis(100), Duration.ofMillis(400)).build());
    try {
      List<ReflectorException> errors = new CopyOnWriteArrayList<>();
      AtomicInteger restarts = new AtomicInteger();
      for (int i = 0; i < count; i++) {
        engine.reflector(ConfigMap.class).namespace("ns-" + i).listener(new ReflectorListener<>() {
          @Override
          public void onError(ReflectorException error) {
            errors.add(error);
          }

          @Override
          public void onRestart(String resourceVersion) {
            restarts.incrementAndGet();
          }
        }).start();
      }
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == count);

      server.stop();
      // every reflector hears that it cannot watch, and keeps retrying with its backoff
      await().atMost(WAIT).until(() -> errors.size() >= 3 * count);
      long startedWhileAway = engine.limiter.started();
      int errorsThen = errors.size();
      // several retries each (at most 0.4 s apart)
      await().atMost(WAIT).until(() -> errors.size() > errorsThen + count);
      assertThat(engine.limiter.started()).as("starts taken by restarts that could not connect")
          .isEqualTo(startedWhileAway);

      server.start();
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == count && restarts.get() >= count);
      assertThat(engine.limiter.started() - startedWhileAway).as("starts taken once the server is back")
          .isEqualTo(count);
    } finally {
      engine.close();
    }
  }

  /** The engine's bucket, and when each start it let through was taken. */
  private static final class Recorded implements StartGate {
    final RestartLimiter limiter;
    private final List<Long> starts = new ArrayList<>();

    Recorded(RestartLimiter limiter) {
      this.limiter = limiter;
    }

    @Override
    public long tryStart() {
      long wait = limiter.tryStart();
      if (wait == 0) {
        synchronized (starts) {
          starts.add(System.nanoTime());
        }
      }
      return wait;
    }

    long[] starts() {
      synchronized (starts) {
        long[] times = starts.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(times);
        return times;
      }
    }
  }

  /** A watch as the reflector's restart sends it: its gate, its body as soon as it is sent. */
  private static final class Watch implements AsyncBody.Consumer<List<ByteBuffer>>, EarlyBody {
    private final StartGate gate;
    volatile AsyncBody sent;

    Watch(StartGate gate) {
      this.gate = gate;
    }

    @Override
    public void sent(AsyncBody body) {
      sent = body;
    }

    @Override
    public void started() {
    }

    @Override
    public StartGate gate() {
      return gate;
    }

    @Override
    public void consume(List<ByteBuffer> buffers, AsyncBody body) {
      body.consume();
    }

    void cancel() {
      AsyncBody body = sent;
      if (body != null) {
        body.cancel();
      }
    }
  }
}
