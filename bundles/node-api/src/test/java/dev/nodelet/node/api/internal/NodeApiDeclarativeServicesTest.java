package dev.nodelet.node.api.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.node.RegisteredNode;
import io.fabric8.kubernetes.api.model.Node;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.felix.framework.FrameworkFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceFactory;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.launch.Framework;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.log.LogEntry;
import org.osgi.service.log.LogListener;
import org.osgi.service.log.LogReaderService;

/**
 * The component as Felix SCR runs it, from the descriptor bnd generates: a log reader that goes (as pax-logging's
 * does while the framework stops) or comes is unbound or bound while the component stays active, so the component
 * is not created again and does not bind its port anew.
 */
class NodeApiDeclarativeServicesTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  @TempDir
  Path dir;

  private Framework framework;

  @AfterEach
  void stop() throws Exception {
    if (framework != null) {
      framework.stop();
      framework.waitForStop(10_000);
    }
  }

  /** A log service's reader that records its listeners coming and going and has no history. */
  private static final class Reader implements LogReaderService {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public void addLogListener(LogListener listener) {
      events.add("listened");
    }

    @Override
    public void removeLogListener(LogListener listener) {
      events.add("left");
    }

    @Override
    public Enumeration<LogEntry> getLog() {
      return Collections.emptyEnumeration();
    }
  }

  @Test
  void aLogReaderThatGoesOrComesLeavesTheComponentActive() throws Exception {
    BundleContext context = start();
    ConfigurationAdmin admin = context.getService(context.getServiceReference(ConfigurationAdmin.class));
    admin.getConfiguration(NodeApiComponent.PID, "?")
        .update(new Hashtable<>(Map.of("port", 0, "address", "127.0.0.1")));
    // each creation of the component gets the node service anew: the count of its creations
    AtomicInteger created = new AtomicInteger();
    context.registerService(RegisteredNode.class.getName(), new ServiceFactory<RegisteredNode>() {
      @Override
      public RegisteredNode getService(Bundle bundle, ServiceRegistration<RegisteredNode> registration) {
        created.incrementAndGet();
        return new Registered("edge-1");
      }

      @Override
      public void ungetService(Bundle bundle, ServiceRegistration<RegisteredNode> registration,
          RegisteredNode service) {
      }
    }, null);
    Reader pax = new Reader();
    ServiceRegistration<LogReaderService> paxRegistration = context.registerService(LogReaderService.class, pax,
        null);
    componentBundle(context).start();
    await().atMost(WAIT).until(() -> created.get() == 1 && pax.events.contains("listened"));

    paxRegistration.unregister();
    await().atMost(WAIT).until(() -> pax.events.contains("left"));
    Reader late = new Reader();
    context.registerService(LogReaderService.class, late, null);
    await().atMost(WAIT).until(() -> late.events.contains("listened"));

    assertThat(created.get()).as("the component was never created again").isEqualTo(1);
    assertThat(pax.events).containsExactly("listened", "left");
  }

  /** A Felix with Config Admin and Declarative Services, sharing the test's classes of the component. */
  private BundleContext start() throws Exception {
    framework = new FrameworkFactory().newFramework(Map.of(
        Constants.FRAMEWORK_STORAGE, dir.resolve("felix").toString(),
        Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT,
        Constants.FRAMEWORK_SYSTEMPACKAGES_EXTRA, String.join(",", "org.osgi.service.log;version=1.5.0",
            "org.osgi.service.cm;version=1.6.0", "dev.nodelet.node", "dev.nodelet.node.api.internal"),
        "felix.cm.dir", dir.resolve("cm").toString()));
    framework.start();
    BundleContext context = framework.getBundleContext();
    for (String type : List.of("org.apache.felix.cm.impl.ConfigurationManager", "org.osgi.util.function.Function",
        "org.osgi.util.promise.Promise", "org.osgi.service.component.ComponentContext",
        "org.apache.felix.scr.impl.Activator")) {
      Path jar = Path.of(Class.forName(type).getProtectionDomain().getCodeSource().getLocation().toURI());
      context.installBundle(jar.toUri().toString());
    }
    for (Bundle bundle : context.getBundles()) {
      if (bundle.getBundleId() != 0 && bundle.getHeaders().get(Constants.FRAGMENT_HOST) == null) {
        bundle.start();
      }
    }
    return context;
  }

  /** A bundle of the component's descriptor alone: its classes come from the test's class path. */
  private static Bundle componentBundle(BundleContext context) throws Exception {
    String descriptor = "OSGI-INF/" + NodeApiComponent.class.getName() + ".xml";
    Manifest manifest = new Manifest();
    Attributes main = manifest.getMainAttributes();
    main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
    main.putValue(Constants.BUNDLE_MANIFESTVERSION, "2");
    main.putValue(Constants.BUNDLE_SYMBOLICNAME, "nodelet-node-api-under-test");
    main.putValue(Constants.IMPORT_PACKAGE,
        "dev.nodelet.node,dev.nodelet.node.api.internal,org.osgi.framework,org.osgi.service.log");
    main.putValue("Service-Component", descriptor);
    ByteArrayOutputStream jar = new ByteArrayOutputStream();
    try (JarOutputStream out = new JarOutputStream(jar, manifest);
        InputStream xml = NodeApiComponent.class.getClassLoader().getResourceAsStream(descriptor)) {
      assertThat(xml).as("the component's descriptor, which bnd generates").isNotNull();
      out.putNextEntry(new JarEntry(descriptor));
      xml.transferTo(out);
      out.closeEntry();
    }
    return context.installBundle("test:node-api", new ByteArrayInputStream(jar.toByteArray()));
  }

  /** This node as node mode registers it. */
  private record Registered(String nodeName) implements RegisteredNode {
    @Override
    public Optional<Node> node() {
      return Optional.empty();
    }
  }
}
