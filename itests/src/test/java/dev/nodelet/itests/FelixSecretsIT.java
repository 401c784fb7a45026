package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.mavenBundle;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.SecretManager;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchOptions;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Comparator;
import java.util.ConcurrentModificationException;
import java.util.Enumeration;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.apache.commons.io.output.TeeOutputStream;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Job;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.forked.ForkedTestContainerFactory;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.log.LogEntry;
import org.osgi.service.log.LogReaderService;
import org.slf4j.LoggerFactory;

/**
 * Secrets never leak: all of Nodelet in Felix with every SLF4J logger at TRACE, writing to a file, and the
 * OSGi log service keeping every entry. Secrets with known values are served to the test under the {@code watch},
 * {@code ttl} and {@code get} strategies, updated on the API server in every phase (so watch events carry new
 * values), one is deleted, gets fail (a Secret the ClusterRole may not read, one no pod references, an invalid name,
 * a deleted one), and every Gogo command of the bundles runs, {@code nodelet:watch} included. Then none of the known
 * values, plain or base64, nor Nodelet's bearer token, is in the log file, an OSGi log entry, the console, a command's
 * output, the text of a caught exception or a {@code toString()} of Nodelet's types; and the log is not empty of the
 * DEBUG and TRACE lines of fabric8 and Nodelet, and the values really were served. The API server speaks HTTPS, so
 * Nodelet's client speaks HTTP/2 through its embedded Jetty, which prints no line below WARN.
 *
 * <p>The test's own writes (updates, the deletion) go to the API server without a token, as an administrator's would;
 * Nodelet's client has the ClusterRole of {@code docs/deploy/rbac.yaml} with Secrets readable by name only, every
 * name but {@value #FORBIDDEN}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixSecretsIT extends NodeletTestSupport {

  private static final String NS = "default";
  /** Part of every plain value: any value, of any version, in any text is a leak. */
  private static final String MARKER = "Qx7Kz";
  /** Nodelet's bearer token: a credential, which must not be logged either. */
  private static final String TOKEN = "nl-bearer-Wm4Rt9Lp2";
  private static final String USER = "system:serviceaccount:nodelet-system:nodelet";
  private static final String DIR_PROPERTY = "nodelet.itest.secrets.dir";
  private static final String KUBECONFIG_PROPERTY = "nodelet.itest.kubeconfig";
  /** The API server's CA, for the test's own requests. */
  private static final String CA_PROPERTY = "nodelet.itest.ca";
  private static final String LOG_FILE = "nodelet-trace.log";
  private static final String SECRET_PID = "dev.nodelet.secret";
  private static final String TTL_PID = "dev.nodelet.store.ttl";
  private static final String SECRETS = "(" + ObjectManager.RESOURCE_PROPERTY + "=secrets)";
  private static final String GOGO_RUNTIME = "org.apache.felix.gogo.runtime";
  /** Printed to System.err by another thread at the end: the console capture works. */
  private static final String CONSOLE_CHECK = "FelixSecretsIT: the console is captured";

  /** Referenced by this node's pods, readable by Nodelet, updated in every phase. */
  private static final List<String> SERVED =
      List.of("s-volume", "s-projected", "s-pull", "s-env", "s-envfrom", "s-direct");
  /** Referenced, served in the first phase, then deleted. */
  private static final String DELETED = "s-deleted";
  /** Referenced, but the ClusterRole does not let Nodelet read it. */
  private static final String FORBIDDEN = "s-forbidden";
  /** Readable, but no pod references it: only the get strategy serves it. */
  private static final String UNREFERENCED = "s-unreferenced";
  /** Immutable, referenced by the directly registered pod: the watch store stops watching it once read. */
  private static final String IMMUTABLE = "s-immutable";
  /** A reference that is not a valid object name. */
  private static final String INVALID = "Bad_Name.";
  private static final List<String> ALL = List.of("s-volume", "s-projected", "s-pull", "s-env", "s-envfrom",
      "s-direct", IMMUTABLE, DELETED, FORBIDDEN, UNREFERENCED);
  /** {@code password} goes into {@code data} (base64), {@code token} into {@code stringData} (plain). */
  private static final List<String> KEYS = List.of("password", "token");
  private static final List<String> STRATEGIES = List.of("watch", "ttl", "get");
  /** Seeded at version 1, updated once per phase and once more through the shell's strategy switch. */
  private static final int VERSIONS = STRATEGIES.size() + 1;

  private static final Pattern LOG_LINE = Pattern.compile("\\] (TRACE|DEBUG|INFO|WARN|ERROR) (\\S+) - ");

  static String value(String secret, String key, int version) {
    return "v" + version + "-" + key + "-of-" + secret + "-" + MARKER;
  }

  private static String base64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  private static Secret secret(String name, int version) {
    return new SecretBuilder().withNewMetadata().withNamespace(NS).withName(name).endMetadata()
        .addToData("password", base64(value(name, "password", version)))
        .addToStringData("token", value(name, "token", version)).build();
  }

  @Configuration
  public Option[] configuration() throws IOException {
    Properties build = build();
    Path dir = Path.of(build.getProperty("build.directory"), "secrets-it");
    Files.createDirectories(dir);
    Files.deleteIfExists(dir.resolve(LOG_FILE));
    ApiServerFixture server = ApiServerFixture.startTlsLimitedTo(Path.of(build.getProperty("rbac.manifest")),
        "nodelet", TOKEN, USER, FelixSecretsIT::secretsByName);
    try (KubernetesClient admin = server.newClient()) {
      seed(admin);
    }
    Path kubeconfig = server.writeKubeconfig(dir.resolve("kubeconfig"), TOKEN);
    List<Option> options = new ArrayList<>(List.of(felixOptions(server, "trace")));
    options.add(systemProperty("org.slf4j.simpleLogger.logFile").value(dir.resolve(LOG_FILE).toString()));
    options.add(systemProperty("org.slf4j.simpleLogger.showDateTime").value("true"));
    options.add(systemProperty("org.slf4j.simpleLogger.dateTimeFormat").value("HH:mm:ss.SSS"));
    // the OSGi log service (SCR, Config Admin, Felix) keeps every entry, down to TRACE
    options.add(systemProperty("org.osgi.service.log.admin.loglevel").value("TRACE"));
    options.add(systemProperty("org.apache.felix.log.storeDebug").value("true"));
    options.add(systemProperty("org.apache.felix.log.maxSize").value("1000000"));
    options.add(systemProperty("ds.loglevel").value("debug"));
    // started by the test, after it has wrapped System.out and System.err: Gogo keeps the streams it finds
    options.add(mavenBundle("org.apache.felix", "org.apache.felix.gogo.runtime",
        build.getProperty("felix.gogo.runtime.version")).noStart());
    // the test's console tee (TeeOutputStream) runs inside the framework
    options.add(mavenBundle("commons-io", "commons-io", build.getProperty("commons-io.version")));
    options.add(systemProperty(DIR_PROPERTY).value(dir.toString()));
    options.add(systemProperty(KUBECONFIG_PROPERTY).value(kubeconfig.toString()));
    options.add(systemProperty(CA_PROPERTY).value(Files.writeString(dir.resolve("ca.pem"), server.caCertificatePem())
        .toString()));
    options.addAll(featureOptions("nodelet-metrics"));
    return options.toArray(Option[]::new);
  }

  /** The ClusterRole's rules with Secrets readable only by name, every name but {@link #FORBIDDEN}. */
  private static List<PolicyRule> secretsByName(List<PolicyRule> rules) {
    List<String> readable = ALL.stream().filter(n -> !n.equals(FORBIDDEN)).toList();
    List<PolicyRule> adjusted = new ArrayList<>();
    boolean found = false;
    for (PolicyRule rule : rules) {
      if (!rule.getResources().contains("secrets")) {
        adjusted.add(rule);
        continue;
      }
      found = true;
      List<String> others = rule.getResources().stream().filter(r -> !r.equals("secrets")).toList();
      if (!others.isEmpty()) {
        adjusted.add(new PolicyRuleBuilder(rule).withResources(others).build());
      }
      adjusted.add(new PolicyRuleBuilder(rule).withResources("secrets").withResourceNames(readable).build());
    }
    if (!found) {
      throw new IllegalStateException("the ClusterRole has no rule on secrets: " + rules);
    }
    return adjusted;
  }

  /** Every Secret at version 1, and this node's pods referencing them in every way a pod can. */
  private static void seed(KubernetesClient admin) {
    for (String name : ALL) {
      Secret secret = secret(name, 1);
      secret.setImmutable(name.equals(IMMUTABLE) ? Boolean.TRUE : null);
      admin.secrets().inNamespace(NS).resource(secret).create();
    }
    admin.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("p-every-kind").endMetadata()
        .withNewSpec().withNodeName(NODE_NAME).addNewImagePullSecret("s-pull")
        .addNewContainer().withName("c").withImage("busybox")
        .addNewEnvFrom().withNewSecretRef().withName("s-envfrom").endSecretRef().endEnvFrom()
        .addNewEnv().withName("PASSWORD").withNewValueFrom().withNewSecretKeyRef().withName("s-env")
        .withKey("password").endSecretKeyRef().endValueFrom().endEnv()
        .endContainer()
        .addNewVolume().withName("secret").withNewSecret().withSecretName("s-volume").endSecret().endVolume()
        .addNewVolume().withName("projected").withNewProjected().addNewSource().withNewSecret()
        .withName("s-projected").endSecret().endSource().endProjected().endVolume()
        .endSpec().build()).create();
    admin.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("p-troubles").endMetadata()
        .withNewSpec().withNodeName(NODE_NAME)
        .addNewContainer().withName("c").withImage("busybox")
        .addNewEnv().withName("FORBIDDEN").withNewValueFrom().withNewSecretKeyRef().withName(FORBIDDEN)
        .withKey("token").endSecretKeyRef().endValueFrom().endEnv()
        .endContainer()
        .addNewVolume().withName("deleted").withNewSecret().withSecretName(DELETED).endSecret().endVolume()
        .addNewVolume().withName("invalid").withNewSecret().withSecretName(INVALID).endSecret().endVolume()
        .endSpec().build()).create();
  }

  /** A pod that only the test knows, registered with the Secret manager directly rather than by the pod source. */
  private static Pod directPod() {
    return new PodBuilder().withNewMetadata().withNamespace(NS).withName("p-direct").withUid("uid-p-direct")
        .endMetadata().withNewSpec().withNodeName(NODE_NAME)
        .addNewContainer().withName("c").withImage("busybox").endContainer()
        .addNewVolume().withName("secret").withNewSecret().withSecretName("s-direct").endSecret().endVolume()
        .addNewVolume().withName("immutable").withNewSecret().withSecretName(IMMUTABLE).endSecret().endVolume()
        .endSpec().build();
  }

  @Test
  public void noSecretValueReachesALogAShellListingOrAnException() throws Exception {
    Path dir = Path.of(System.getProperty(DIR_PROPERTY));
    Evidence evidence = new Evidence();
    evidence.teeConsole();
    // Gogo puts its own System.out and System.err back whenever a command runs; they write to the ones it found
    Bundle gogo = bundle(GOGO_RUNTIME);
    gogo.start();
    ExecutorService executor = Executors.newCachedThreadPool();
    AtomicInteger servedGets = new AtomicInteger();
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> clients = track(KubernetesClient.class, null);
        Tracked<SecretManager> secretManagers = track(SecretManager.class, null);
        Tracked<ObjectManager> objectManagers = track(ObjectManager.class, SECRETS);
        Tracked<CommandProcessor> processors = track(CommandProcessor.class, null)) {
      ConfigurationAdmin configurationAdmin = admin.await();
      int metricsPort;
      try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
        metricsPort = socket.getLocalPort();
      }
      configurationAdmin.getConfiguration("dev.nodelet.metrics", "?").update(new Hashtable<>(Map.of(
          "port", metricsPort)));
      configurationAdmin.getConfiguration(TTL_PID, "?").update(new Hashtable<>(Map.of(
          "default.ttl.seconds", 1)));
      configurationAdmin.getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "kubeconfig.path", System.getProperty(KUBECONFIG_PROPERTY), "node.name", NODE_NAME)));
      // the health endpoint too: its receipts and check messages are evidence like the commands' output
      int healthPort;
      try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        healthPort = free.getLocalPort();
      }
      configurationAdmin.getConfiguration("dev.nodelet.health", "?").update(new Hashtable<>(Map.of(
          "port", healthPort)));
      KubernetesClient client = await().atMost(WAIT).until(clients::await,
          c -> TOKEN.equals(c.getConfiguration().getAutoOAuthToken())
              || TOKEN.equals(c.getConfiguration().getOauthToken()));
      SecretManager manager = secretManagers.await();
      ObjectManager<?> objects = objectManagers.await();
      Pod direct = directPod();
      manager.registerPod(direct);

      ByteArrayOutputStream sessionOut = new ByteArrayOutputStream();
      CommandSession session = processors.await().createSession(InputStream.nullInputStream(), sessionOut,
          sessionOut);
      Shell shell = new Shell(session, sessionOut, evidence);

      Set<String> live = new LinkedHashSet<>(SERVED);
      live.add(DELETED);
      Set<String> immutable = Set.of(IMMUTABLE);
      int version = 1;
      for (String strategy : STRATEGIES) {
        retarget(configurationAdmin, strategy);
        await().atMost(WAIT).until(objects::strategy, strategy::equals);
        // the first gets may come before the pod source has registered the pods
        awaitServed(manager, live, version, servedGets);
        awaitServed(manager, immutable, 1, servedGets);

        Watch<Secret> watch = manager.watch(WatchOptions.<Secret>builder().sendInitialEvents(true).build());
        List<WatchEvent<Secret>> events = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> consumed = watch.forEachAsync(executor, events::add);
        int watchers = objects.watchStatistics().watchers();
        GogoWatch gogoWatch = new GogoWatch(processors.await(), executor);
        // the command watches from now on: the writes below must come after its watch is open
        await().atMost(WAIT).until(() -> objects.watchStatistics().watchers() > watchers);

        version++;
        for (String name : SERVED) {
          write("PUT", name, client.getKubernetesSerialization().asJson(secret(name, version)));
        }
        if (strategy.equals("watch")) {
          write("DELETE", DELETED, null);
          live.remove(DELETED);
        }
        awaitServed(manager, live, version, servedGets);
        int current = version;
        // the manager's watch carried the new values to its consumer
        await().atMost(WAIT).until(() -> SERVED.stream().allMatch(name -> events.stream().anyMatch(e ->
            e.type() == WatchEvent.Type.MODIFIED && name.equals(e.object().getMetadata().getName())
                && served(e.object(), "password").equals(value(name, "password", current)))));
        await().atMost(WAIT).until(() -> gogoWatch.output().contains("MODIFIED default/s-volume"));

        failingGets(manager, objects, strategy, evidence, servedGets);
        shell.runEveryCommand(strategy, version);
        scrapeHealth(healthPort, evidence, strategy);

        evidence.add("nodelet:watch secret (" + strategy + ")", gogoWatch.stop());
        watch.close();
        consumed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        // the interrupted command closed its watch too
        await().atMost(WAIT).until(() -> objects.watchStatistics().watchers() == 0);
        evidence.add("WatchEvent.toString (" + strategy + ")", events.stream().map(Object::toString).toList());
        evidence.add("toString of Nodelet's types (" + strategy + ")", List.of(String.valueOf(manager),
            String.valueOf(objects), String.valueOf(objects.objects()), String.valueOf(objects.registeredPods()),
            String.valueOf(objects.watchStatistics()), String.valueOf(watch)));
      }

      // the metrics of every strategy's stores and of the manager name no Secret and carry no value
      String scrape = await().atMost(WAIT).ignoreExceptions().until(() -> MetricsScrape.text(metricsPort),
          text -> MetricsScrape.hasSamples(text, "nodelet_store_ttl_syncs"));
      evidence.add("metrics scrape", scrape);
      for (String name : ALL) {
        assertFalse(name + " in the metrics", scrape.contains("\"" + name + "\""));
      }

      // back to watch through the shell, with values the watch store has not seen yet
      shell.run("nodelet:strategy secret watch");
      await().atMost(WAIT).until(objects::strategy, "watch"::equals);
      version++;
      for (String name : SERVED) {
        write("PUT", name, client.getKubernetesSerialization().asJson(secret(name, version)));
      }
      awaitServed(manager, live, version, servedGets);
      shell.runEveryCommand("watch again", version);
      manager.unregisterPod(direct);
      await().atMost(WAIT).ignoreExceptions().until(() -> {
        try {
          manager.getSecret(NS, "s-direct");
          return false;
        } catch (NotRegisteredException e) {
          evidence.add("get s-direct after its pod was unregistered", e);
          return true;
        }
      });
      session.close();
    } finally {
      executor.shutdownNow();
      gogo.stop();
      new Thread(() -> System.err.println(CONSOLE_CHECK), "console-check").start();
      await().atMost(WAIT).until(() -> evidence.console().contains(CONSOLE_CHECK));
      evidence.restoreConsole();
    }

    // what Nodelet logs while it stops (watches closed, clients shut down) is read as well
    List<Bundle> nodelet = new ArrayList<>(Stream.of(bundleContext.getBundles())
        .filter(b -> b.getSymbolicName() != null && b.getSymbolicName().startsWith("nodelet-")).toList());
    Collections.reverse(nodelet);
    for (Bundle bundle : nodelet) {
      bundle.stop();
    }
    try (Tracked<LogReaderService> logs = track(LogReaderService.class, null)) {
      evidence.osgiLog(logs.await());
    }
    List<String> logLines = Files.readAllLines(dir.resolve(LOG_FILE), StandardCharsets.UTF_8);
    evidence.add("SLF4J log file", logLines);
    evidence.writeTo(dir.resolve("evidence"));

    Map<String, String> needles = needles();
    List<String> leaks = evidence.leaks(needles);
    Map<String, Integer> levels = levels(logLines);
    String summary = String.format("FelixSecretsIT: %d lines of the SLF4J log %s, %d OSGi log entries, "
        + "%d command outputs, %d exception texts, %d served gets; %d known values searched in %d texts: "
        + "%d leaks", logLines.size(), levels, evidence.osgiEntries, evidence.commands, evidence.exceptions,
        servedGets.get(), needles.size(), evidence.texts.size(), leaks.size());
    System.out.println(summary);
    Files.writeString(dir.resolve("summary.txt"), summary + "\n" + String.join("\n", leaks) + "\n");

    assertEquals("known secret values in logs, shell output or exceptions (the value masked as <LEAK>)",
        List.of(), leaks);
    // the search finds a value where there is one
    Evidence control = new Evidence();
    control.add("control", "data: " + base64(value("s-volume", "password", 2)));
    assertTrue("the search finds a base64 value", !control.leaks(needles).isEmpty());
    assertTrue("fabric8's HTTP logging is off", logLines.stream().noneMatch(l -> l.contains("HttpLoggingInterceptor")
        || l.contains("-HTTP START-")));
    // not vacuous: the log holds the fine-grained lines of both fabric8 and Nodelet, the values were served
    assertTrue("fabric8 DEBUG/TRACE lines: " + levels, levels.getOrDefault("io.fabric8 DEBUG", 0)
        + levels.getOrDefault("io.fabric8 TRACE", 0) > 0);
    assertTrue("Nodelet DEBUG/TRACE lines: " + levels, levels.getOrDefault("dev.nodelet DEBUG", 0)
        + levels.getOrDefault("dev.nodelet TRACE", 0) > 0);
    // TRACE was on; nothing in this run logs at TRACE but fabric8's HTTP logging, which Nodelet's clients leave out
    for (String logger : List.of("io.fabric8.kubernetes.client.http.HttpLoggingInterceptor", "dev.nodelet",
        "dev.nodelet.kube.internal.jetty.client.HttpSender")) {
      assertTrue(logger + " at TRACE", LoggerFactory.getLogger(logger).isTraceEnabled());
    }
    // the client spoke HTTP/2 over TLS, through Jetty, whose logging is its own: no line of Jetty's below WARN
    assertTrue("a client over HTTP/2", logLines.stream().anyMatch(l -> l.contains("HTTP/2 over Jetty's client")
        && l.contains("https://")));
    assertTrue("Jetty's lines below WARN", logLines.stream().noneMatch(l -> l.matches(
        ".*\\] (TRACE|DEBUG|INFO) (dev\\.nodelet\\.kube\\.internal\\.jetty|org\\.eclipse\\.jetty)\\..*")));
    assertTrue("log lines: " + logLines.size(), logLines.size() > 100);
    assertTrue("OSGi log entries: " + evidence.osgiEntries, evidence.osgiEntries > 0);
    assertTrue("served gets: " + servedGets, servedGets.get() >= VERSIONS * SERVED.size());
  }

  // ---------------------------------------------------------------- the run

  private static void retarget(ConfigurationAdmin admin, String strategy) throws IOException {
    admin.getConfiguration(SECRET_PID, "?").update(new Hashtable<>(Map.of(
        "strategy.target", "(nodelet.strategy=" + strategy + ")")));
  }

  /** Waits until every one of {@code names} is served with the values of {@code version}. */
  private static void awaitServed(SecretManager manager, Set<String> names, int version, AtomicInteger count) {
    await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
      for (String name : names) {
        Secret secret = manager.getSecret(NS, name);
        for (String key : KEYS) {
          assertEquals(name + "/" + key, value(name, key, version), served(secret, key));
        }
        count.incrementAndGet();
      }
    });
  }

  /** A key's value as a consumer reads it: from {@code stringData} if there, else decoded from {@code data}. */
  private static String served(Secret secret, String key) {
    if (secret.getStringData() != null && secret.getStringData().containsKey(key)) {
      return secret.getStringData().get(key);
    }
    String data = secret.getData() == null ? null : secret.getData().get(key);
    return data == null ? null : new String(Base64.getDecoder().decode(data), StandardCharsets.UTF_8);
  }

  /** Every way a get fails, through the SecretManager and the ObjectManager service; the texts are kept. */
  private static void failingGets(SecretManager manager, ObjectManager<?> objects, String strategy,
      Evidence evidence, AtomicInteger servedGets) {
    evidence.expectFailure(FORBIDDEN + " (" + strategy + ")", () -> manager.getSecret(NS, FORBIDDEN));
    evidence.expectFailure(FORBIDDEN + " via ObjectManager (" + strategy + ")", () -> objects.get(NS, FORBIDDEN));
    evidence.expectFailure(DELETED + " (" + strategy + ")", () -> manager.getSecret(NS, DELETED));
    evidence.expectFailure(INVALID + " (" + strategy + ")", () -> manager.getSecret(NS, INVALID));
    evidence.expectFailure("s-volume in another namespace (" + strategy + ")",
        () -> manager.getSecret("elsewhere", "s-volume"));
    if (strategy.equals("get")) {
      // the get strategy does not track registrations: it serves any Secret it may read
      Secret unreferenced = manager.getSecret(NS, UNREFERENCED);
      assertEquals(value(UNREFERENCED, "token", 1), served(unreferenced, "token"));
      servedGets.incrementAndGet();
    } else {
      Throwable t = evidence.expectFailure(UNREFERENCED + " (" + strategy + ")",
          () -> manager.getSecret(NS, UNREFERENCED));
      assertTrue(t.toString(), t instanceof NotRegisteredException);
    }
  }

  /** Every page of the health endpoint, into the evidence; waits for the endpoint to listen. */
  private static void scrapeHealth(int port, Evidence evidence, String phase) throws Exception {
    for (String path : List.of("/receipts", "/readyz?verbose", "/livez?verbose", "/system/health")) {
      URI uri = URI.create("http://127.0.0.1:" + port + path);
      String body = await().atMost(WAIT).ignoreExceptions().until(() -> Http.CLIENT.send(HttpRequest.newBuilder(uri)
          .build(), HttpResponse.BodyHandlers.ofString()).body(), b -> !b.isEmpty());
      evidence.add("health " + path + " (" + phase + ")", body);
    }
  }

  /** A write of the test's own, without a token: allowed everything, as an administrator. */
  private static void write(String method, String name, String body) throws Exception {
    URI uri = URI.create(System.getProperty(API_SERVER_URL_PROPERTY) + "/api/v1/namespaces/" + NS + "/secrets/"
        + name);
    HttpRequest.Builder request = HttpRequest.newBuilder(uri).header("Content-Type", "application/json");
    request.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
        : HttpRequest.BodyPublishers.ofString(body));
    HttpResponse<String> response = Http.CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() / 100 != 2) {
      throw new AssertionError(method + " " + uri + " answered " + response.statusCode());
    }
  }

  private Bundle bundle(String symbolicName) {
    return Stream.of(bundleContext.getBundles()).filter(b -> symbolicName.equals(b.getSymbolicName())).findFirst()
        .orElseThrow(() -> new AssertionError("no bundle " + symbolicName));
  }

  /** The test's own HTTP client, inside the framework only: it trusts the API server's CA. */
  private static final class Http {
    static final HttpClient CLIENT = trustingTheApiServer();

    private static HttpClient trustingTheApiServer() {
      try (InputStream pem = Files.newInputStream(Path.of(System.getProperty(CA_PROPERTY)))) {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        trusted.setCertificateEntry("api-server-ca", CertificateFactory.getInstance("X.509")
            .generateCertificate(pem));
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, trust.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(tls).build();
      } catch (IOException | GeneralSecurityException e) {
        throw new IllegalStateException("cannot trust the API server's CA from " + System.getProperty(CA_PROPERTY), e);
      }
    }
  }

  // ---------------------------------------------------------------- what is searched, and for what

  /** Every known value, plain and base64 (standard and URL-safe, without padding), and the bearer token. */
  private static Map<String, String> needles() {
    Map<String, String> needles = new LinkedHashMap<>();
    needles.put(MARKER, "the marker of every plain value");
    for (String secret : ALL) {
      for (String key : KEYS) {
        for (int version = 1; version <= VERSIONS; version++) {
          String plain = value(secret, key, version);
          String what = secret + "/" + key + " v" + version;
          needles.put(plain, what + " (plain)");
          byte[] bytes = plain.getBytes(StandardCharsets.UTF_8);
          needles.put(Base64.getEncoder().withoutPadding().encodeToString(bytes), what + " (base64)");
          needles.putIfAbsent(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes), what + " (base64url)");
        }
      }
    }
    needles.put(TOKEN, "the bearer token (plain)");
    needles.put(Base64.getEncoder().withoutPadding().encodeToString(TOKEN.getBytes(StandardCharsets.UTF_8)),
        "the bearer token (base64)");
    return needles;
  }

  /** Lines per logger prefix ({@code io.fabric8}, {@code dev.nodelet}, other) and level. */
  private static Map<String, Integer> levels(List<String> lines) {
    Map<String, Integer> levels = new java.util.TreeMap<>();
    for (String line : lines) {
      Matcher m = LOG_LINE.matcher(line);
      if (m.find()) {
        String logger = m.group(2);
        String origin = logger.startsWith("io.fabric8") ? "io.fabric8"
            : logger.startsWith("dev.nodelet") ? "dev.nodelet" : "other";
        levels.merge(origin + " " + m.group(1), 1, Integer::sum);
      }
    }
    return levels;
  }

  // ---------------------------------------------------------------- helpers

  /** The Gogo session that runs the commands; what each prints or returns is evidence. */
  private static final class Shell {
    private final CommandSession session;
    private final ByteArrayOutputStream out;
    private final Evidence evidence;

    Shell(CommandSession session, ByteArrayOutputStream out, Evidence evidence) {
      this.session = session;
      this.out = out;
      this.evidence = evidence;
    }

    /** Runs a command and keeps its output, or the text of its exception. */
    String run(String command) {
      out.reset();
      String text;
      try {
        Object result = session.execute(command);
        text = out.toString(StandardCharsets.UTF_8) + (result == null ? "" : String.valueOf(result));
      } catch (Exception e) {
        evidence.add("exception of " + command, e);
        text = out.toString(StandardCharsets.UTF_8);
      }
      evidence.commands++;
      evidence.add(command, text);
      return text;
    }

    /** Every command of scope nodelet, on every Secret and with bad arguments. */
    void runEveryCommand(String phase, int version) {
      for (String command : List.of("nodelet:pods", "nodelet:pods --receipts", "nodelet:objects",
          "nodelet:strategy", "nodelet:strategy secret", "nodelet:strategy secrets", "nodelet:watchstats", "nodelet:drivers", "nodelet:slices",
          "nodelet:get secrets " + NS + " s-volume", "nodelet:get --bogus secret " + NS + " s-volume",
          "nodelet:get --show-secret secret " + NS + " " + FORBIDDEN, "nodelet:get pods " + NS + " p-direct",
          "nodelet:strategy secret 'no(such'", "nodelet:get configmap " + NS + " " + SEEDED_CONFIGMAP)) {
        run(command);
      }
      for (String name : ALL) {
        run("nodelet:get secret " + NS + " " + name);
      }
      run("nodelet:get secret " + NS + " " + INVALID);
      String redacted = run("nodelet:get secret " + NS + " s-volume");
      assertTrue(phase + ": " + redacted, redacted.contains("password: \"<redacted, "));

      // asked for explicitly, the data is shown: the output proves the search would find it, and is not evidence
      out.reset();
      try {
        Object shown = session.execute("nodelet:get --show-secret secret " + NS + " s-volume");
        assertTrue(phase + ": --show-secret shows the value", String.valueOf(shown)
            .contains(base64(value("s-volume", "password", version))));
      } catch (Exception e) {
        throw new AssertionError(phase + ": nodelet:get --show-secret failed", e);
      }
    }
  }

  /** {@code nodelet:watch secret} in a session of its own, on a thread of its own, until stopped. */
  private static final class GogoWatch {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final CommandSession session;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    GogoWatch(CommandProcessor processor, ExecutorService executor) {
      PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
      session = processor.createSession(InputStream.nullInputStream(), print, print);
      executor.execute(() -> {
        try {
          session.execute("nodelet:watch secret");
          done.complete(null);
        } catch (Throwable t) {
          done.completeExceptionally(t);
        }
      });
    }

    String output() {
      return out.toString(StandardCharsets.UTF_8);
    }

    /** Interrupts the command's job, as the shell's Ctrl-C does, and returns what it printed. */
    String stop() throws Exception {
      for (int attempt = 0; attempt < 10; attempt++) {
        try {
          List.copyOf(session.jobs()).forEach(Job::interrupt);
          break;
        } catch (ConcurrentModificationException e) {
          // the job list changed as it was read: read it again
        }
      }
      try {
        done.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof InterruptedException)) {
          throw new AssertionError("nodelet:watch failed: " + output(), e.getCause());
        }
        // how an interrupted job ends in Gogo; the text is evidence as well
        return output() + "\n" + Evidence.text(e.getCause());
      } finally {
        session.close();
      }
      return output();
    }
  }

  /** Every text the run produced that a person or a log collector could see. */
  private static final class Evidence {
    /** Source name and text, in order. */
    private final List<Map.Entry<String, String>> texts = Collections.synchronizedList(new ArrayList<>());
    private final ByteArrayOutputStream console = new ByteArrayOutputStream();
    private PrintStream systemOut;
    private PrintStream systemErr;
    int commands;
    int exceptions;
    int osgiEntries;

    void add(String source, String text) {
      texts.add(Map.entry(source, text));
    }

    void add(String source, List<String> lines) {
      add(source, String.join("\n", lines));
    }

    void add(String source, Throwable t) {
      exceptions++;
      add(source, text(t));
    }

    /** Message, toString and the whole stack trace, causes and suppressed exceptions included. */
    static String text(Throwable t) {
      StringWriter stack = new StringWriter();
      t.printStackTrace(new PrintWriter(stack));
      return t.getMessage() + "\n" + t + "\n" + stack;
    }

    /** Runs an action that must fail and keeps the text of its exception. */
    Throwable expectFailure(String what, Runnable action) {
      try {
        action.run();
      } catch (RuntimeException e) {
        add("exception of get " + what, e);
        return e;
      }
      throw new AssertionError("get " + what + " did not fail");
    }

    /** Copies everything written to System.out and System.err from now on. */
    void teeConsole() {
      systemOut = System.out;
      systemErr = System.err;
      System.setOut(new PrintStream(new TeeOutputStream(systemOut, console), true, StandardCharsets.UTF_8));
      System.setErr(new PrintStream(new TeeOutputStream(systemErr, console), true, StandardCharsets.UTF_8));
    }

    String console() {
      synchronized (console) {
        return console.toString(StandardCharsets.UTF_8);
      }
    }

    void restoreConsole() {
      System.setOut(systemOut);
      System.setErr(systemErr);
      synchronized (console) {
        add("System.out and System.err", console.toString(StandardCharsets.UTF_8));
      }
    }

    /** Every entry of the OSGi log service, with its exception. */
    void osgiLog(LogReaderService reader) {
      List<String> lines = new ArrayList<>();
      for (Enumeration<LogEntry> entries = reader.getLog(); entries.hasMoreElements(); ) {
        LogEntry entry = entries.nextElement();
        osgiEntries++;
        lines.add(entry.getLogLevel() + " " + entry.getLoggerName() + " " + entry.getBundle() + " "
            + entry.getServiceReference() + " " + entry.getMessage());
        if (entry.getException() != null) {
          lines.add(text(entry.getException()));
        }
      }
      add("OSGi log service", lines);
    }

    /**
     * One line per line of text that holds a needle: source, line number, what it holds and the line with every
     * needle masked.
     */
    List<String> leaks(Map<String, String> needles) {
      List<String> leaks = new ArrayList<>();
      synchronized (texts) {
        for (Map.Entry<String, String> text : texts) {
          String[] lines = text.getValue().split("\n", -1);
          for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            List<String> found = needles.entrySet().stream().filter(n -> line.contains(n.getKey()))
                .map(Map.Entry::getValue).toList();
            if (!found.isEmpty()) {
              String masked = line;
              // longest first: the marker is part of every plain value
              for (String needle : needles.keySet().stream()
                  .sorted(Comparator.comparingInt(String::length).reversed()).toList()) {
                masked = masked.replace(needle, "<LEAK>");
              }
              leaks.add(text.getKey() + ":" + (i + 1) + ": " + String.join(", ", found) + ": "
                  + masked.substring(0, Math.min(400, masked.length())));
            }
          }
        }
      }
      return leaks;
    }

    /** Each source in a file of its own, for reading after the run. */
    void writeTo(Path dir) throws IOException {
      Files.createDirectories(dir);
      Map<String, StringBuilder> bySource = new LinkedHashMap<>();
      synchronized (texts) {
        for (Map.Entry<String, String> text : texts) {
          String file = text.getKey().startsWith("exception") ? "exceptions"
              : text.getKey().startsWith("nodelet:") ? "commands"
              : text.getKey().replaceAll("[^A-Za-z0-9.]+", "-");
          bySource.computeIfAbsent(file, f -> new StringBuilder()).append("==== ").append(text.getKey())
              .append('\n').append(text.getValue()).append('\n');
        }
      }
      for (Map.Entry<String, StringBuilder> file : bySource.entrySet()) {
        if (!file.getKey().startsWith("SLF4J")) {
          Files.writeString(dir.resolve(file.getKey() + ".txt"), file.getValue());
        }
      }
    }
  }
}
