package dev.nodelet.store.watch.internal;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client the watch strategy lists and watches with, beside the one it is given.
 *
 * <p>HTTP/1.1: the API server allows 100 concurrent HTTP/2 streams per connection (kubernetes#121120), and the JDK
 * 17 client opens no second connection when they are used up, so the 101st watch would fail for good. Over HTTP/1.1
 * each watch has its own connection, all served by the client's one selector thread. Its pools are small and
 * bounded, so threads do not grow with the number of watches. It does not reconnect a failed watch itself (fabric8
 * would back off to 32 s): the store retries sooner and relists on 410 Gone.
 *
 * <p>The pools are never shut down. The JDK 17 client cannot be closed, and it completes a response on its executor:
 * if that executor rejected the task, a list or watch answered after {@link #close()} never completed, so the store
 * never closed the watch, the connection stayed open and the server kept the watch, for good (the open exchange also
 * keeps the client and its selector thread from the garbage collector). Once closed, the pools keep running what is
 * still in flight (the stores close every watch that comes back late) and their threads end within
 * {@link #CLOSED_KEEP_ALIVE} of their last task.
 */
public final class WatchClient implements AutoCloseable {

  private static final int HTTP_THREADS = 2;
  private static final int TASK_THREADS = 4;
  /** How long a thread of a closed client's pools waits for more work before it ends. */
  static final Duration CLOSED_KEEP_ALIVE = Duration.ofSeconds(1);

  private final KubernetesClient client;
  private final List<ThreadPoolExecutor> pools;

  /** @param of the client whose configuration (server, credentials, timeouts) to use; not closed here */
  public WatchClient(KubernetesClient of) {
    ThreadPoolExecutor http = pool("nodelet-store-watch-http", HTTP_THREADS);
    ThreadPoolExecutor tasks = pool("nodelet-store-watch-task", TASK_THREADS);
    this.pools = List.of(http, tasks);
    // no retries inside fabric8 either (10 by default, ~19 s against a stopped server): the store retries itself
    Config config = new ConfigBuilder(of.getConfiguration()).withWatchReconnectLimit(0)
        .withRequestRetryBackoffLimit(0).withOnlyHttpWatches(true).build();
    this.client = new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientFactory(new JdkHttpClientFactory() {
          @Override
          protected void additionalConfig(HttpClient.Builder builder) {
            builder.version(HttpClient.Version.HTTP_1_1).executor(http);
          }
        })
        // fabric8 adds its HttpLoggingInterceptor when its logger is at TRACE, and that logs Secret data and tokens
        .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("HttpLogging", null))
        .withTaskExecutor(tasks)
        .build();
  }

  public KubernetesClient client() {
    return client;
  }

  private static ThreadPoolExecutor pool(String prefix, int size) {
    AtomicInteger threads = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(size, size, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        runnable -> {
          Thread thread = new Thread(runnable, prefix + "-" + threads.incrementAndGet());
          thread.setDaemon(true);
          return thread;
        });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * Closes the client. What is in flight still completes (rejecting it would strand its connection, see above); the
   * pools' threads end within {@link #CLOSED_KEEP_ALIVE} of their last task. Idle connections close when the garbage
   * collector takes the JDK client, with its selector thread.
   */
  @Override
  public void close() {
    client.close();
    // shorter than before: the idle threads are woken and end after this
    pools.forEach(pool -> pool.setKeepAliveTime(CLOSED_KEEP_ALIVE.toMillis(), TimeUnit.MILLISECONDS));
  }

  /** The threads of the client's pools, for tests. */
  int poolThreads() {
    return pools.stream().mapToInt(ThreadPoolExecutor::getPoolSize).sum();
  }
}
