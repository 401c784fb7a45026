package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;

import dev.nodelet.kube.NodeIdentity;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.security.PrivilegedActionException;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import javax.inject.Inject;
import javax.security.auth.Subject;
import org.apache.karaf.features.Feature;
import org.apache.karaf.features.FeaturesService;
import org.apache.karaf.shell.api.console.Command;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.junit.FixMethodOrder;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.MethodSorters;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.karaf.container.internal.KarafTestContainerFactory;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;

/**
 * The features in a real Karaf, resolving offline: README.md's steps through the shell ({@code feature:repo-add},
 * {@code feature:install -r nodelet}, the {@code nodelet:*} commands), then the FeaturesService's view, with
 * {@code dev.nodelet.kube} configured by {@code etc/dev.nodelet.kube.cfg} and the example driver by a file in
 * {@code etc/}, as the README configures them.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(KarafTestContainerFactory.class)
@FixMethodOrder(MethodSorters.NAME_ASCENDING)
public class KarafKubeIT extends NodeletTestSupport {

  @Inject
  private FeaturesService featuresService;

  @Inject
  private SessionFactory sessionFactory;

  /** The example driver of README.md's Karaf steps (docs/karaf.md), as a file in {@code etc/}. */
  private static final String README_DRIVER = "karaf.example.com";
  private static final String README_POD = "readme";

  @Configuration
  public Option[] configuration() {
    List<Option> options = new ArrayList<>(List.of(karafOptions()));
    String driverCfg = "etc/dev.nodelet.driver.example-karaf.cfg";
    options.add(editConfigurationFilePut(driverCfg, "driver.name", README_DRIVER));
    options.add(editConfigurationFilePut(driverCfg, "pool", NODE_NAME));
    options.add(editConfigurationFilePut(driverCfg, "device.count", "2"));
    // a pod of this node that references the seeded ConfigMap, as the demo's pod "elsewhere" references other-config
    try (KubernetesClient admin = apiServer().newClient()) {
      admin.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName(README_POD)
          .endMetadata().withNewSpec().withNodeName(NODE_NAME).addNewContainer().withName("c").withImage("busybox")
          .addNewEnvFrom().withNewConfigMapRef().withName(SEEDED_CONFIGMAP).endConfigMapRef().endEnvFrom()
          .endContainer().endSpec().build()).create();
    }
    return options.toArray(Option[]::new);
  }

  private void install(String feature) throws Exception {
    String version = System.getProperty(VERSION_PROPERTY);
    featuresService.addRepository(URI.create("mvn:dev.nodelet/nodelet-features/" + version + "/xml/features"));
    // like feature:install --no-auto-refresh: a refresh would also restart this test's probe bundle
    featuresService.installFeature(feature, EnumSet.of(FeaturesService.Option.NoAutoRefreshBundles));
  }

  @Test
  public void nodeletFeatureInstallsOfflineAndConnects() throws Exception {
    install("nodelet");

    for (String name : List.of("nodelet", "nodelet-kube", "nodelet-fabric8", "nodelet-runtime")) {
      Feature feature = featuresService.getFeature(name);
      assertTrue(name + " is installed", featuresService.isInstalled(feature));
    }
    List<String> notActive = new ArrayList<>();
    for (Bundle bundle : bundleContext.getBundles()) {
      if (bundle.getState() != Bundle.ACTIVE && bundle.getHeaders().get("Fragment-Host") == null) {
        notActive.add(bundle.getSymbolicName() + " state " + bundle.getState());
      }
    }
    assertEquals("bundles not active", List.of(), notActive);

    String nodeFilter = "(" + NodeIdentity.NODE_NAME_PROPERTY + "=" + NODE_NAME + ")";
    try (Tracked<KubernetesClient> client = track(KubernetesClient.class, nodeFilter);
        Tracked<NodeIdentity> identity = track(NodeIdentity.class, nodeFilter)) {
      assertEquals(SEEDED_VALUE, client.await().configMaps().inNamespace("default").withName(SEEDED_CONFIGMAP)
          .get().getData().get(SEEDED_KEY));
      // fabric8's own ManagedKubernetesClient stays unconfigured: the only client is Nodelet's
      ServiceReference<?>[] clients = bundleContext.getServiceReferences(KUBERNETES_CLIENT, null);
      assertEquals(1, clients.length);
      assertEquals(KUBE_BUNDLE, clients[0].getBundle().getSymbolicName());
      String expectedUid = System.getProperty(NODE_UID_PROPERTY);
      await().atMost(WAIT).until(() -> identity.await().nodeUid(), Optional.of(expectedUid)::equals);
    }
  }

  /**
   * README.md's Karaf steps, command for command, through a headless session as {@code bin/client} runs them: the
   * features repository, {@code feature:install -r nodelet} (which brings {@code nodelet-karaf-shell} where Karaf's
   * shell is), then the {@code nodelet:*} commands with the output the README shows. It runs first (name order), so
   * its {@code feature:install} is the one that installs Nodelet in this Karaf.
   */
  @Test
  public void karafShellFeatureRegistersTheNodeletCommands() throws Exception {
    String repository = "mvn:dev.nodelet/nodelet-features/" + System.getProperty(VERSION_PROPERTY) + "/xml/features";
    assertEquals("Adding feature url " + repository, execute("feature:repo-add " + repository).trim());
    assertEquals("", execute("feature:install -r nodelet").trim());
    assertTrue("nodelet is installed", featuresService.isInstalled(featuresService.getFeature("nodelet")));
    assertTrue("nodelet installs the Karaf commands with the shell", Arrays.stream(
        bundleContext.getBundles()).anyMatch(b -> b.getSymbolicName().equals("nodelet-karaf-shell")));

    // the Karaf command, not the Gogo command of the same name (nodelet-gogo-shell)
    await().atMost(WAIT).until(() -> sessionFactory.getRegistry().getCommands().stream()
        .filter(c -> c.getScope().equals("nodelet") && c.getName().equals("objects"))
        .map(Command::getDescription).anyMatch(d -> d.startsWith("Lists the ConfigMaps and Secrets")));

    Pattern referenced = Pattern.compile("(?m)^configmaps +default +" + SEEDED_CONFIGMAP + " +\\S+ +running +1 +\\S+");
    String objects = await().atMost(WAIT).until(() -> execute("nodelet:objects"),
        o -> referenced.matcher(o).find());
    assertTrue(objects, objects.matches("(?s)RESOURCE +NAMESPACE +NAME +STRATEGY +STATE +REFERENCES +LAST-ACCESS\n.*"));

    String yaml = execute("nodelet:get configmap default " + SEEDED_CONFIGMAP);
    assertTrue(yaml, yaml.contains("kind: \"ConfigMap\"\n"));
    assertTrue(yaml, yaml.contains("  name: \"" + SEEDED_CONFIGMAP + "\"\n"));
    assertTrue(yaml, yaml.contains("  " + SEEDED_KEY + ": \"" + SEEDED_VALUE + "\"\n"));

    Pattern driver = Pattern.compile("(?m)^" + Pattern.quote(README_DRIVER) + " +MONITORING +\\S+ +- +- +-");
    String drivers = await().atMost(WAIT).until(() -> execute("nodelet:drivers"), d -> driver.matcher(d).find());
    assertTrue(drivers, drivers.matches("(?s)DRIVER +STATE +LAST-SNAPSHOT +BACKOFF +GRACE-LEFT +LAST-ERROR\n.*"));

    String help = execute("nodelet:get --help");
    assertTrue(help, help.contains("Shows one ConfigMap or Secret as YAML, as the manager serves it"));
    assertTrue(help, help.contains("nodelet:get [options] kind namespace name"));
    assertTrue(help, help.contains("--show-secret"));
  }

  /**
   * The user {@code karaf} of {@code bin/client}, with the roles of its group {@code admingroup} in
   * {@code etc/users.properties}: Karaf runs a restricted command such as {@code feature:install} only for a subject
   * with the role its ACL names. The principal classes are on Karaf's boot class path, not in a Maven repository.
   */
  private Subject karafUser() throws ReflectiveOperationException {
    Bundle system = bundleContext.getBundle(0);
    Subject subject = new Subject();
    subject.getPrincipals().add(principal(system, "UserPrincipal", "karaf"));
    for (String role : List.of("admin", "manager", "viewer", "systembundles", "ssh")) {
      subject.getPrincipals().add(principal(system, "RolePrincipal", role));
    }
    return subject;
  }

  private static Principal principal(Bundle system, String type, String name) throws ReflectiveOperationException {
    return (Principal) system.loadClass("org.apache.karaf.jaas.boot.principal." + type)
        .getConstructor(String.class).newInstance(name);
  }

  private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;]*m");

  /** What a command printed, and what it returned (Gogo commands return their text). */
  private String execute(String command) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try (PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
        Session session = sessionFactory.create(new ByteArrayInputStream(new byte[0]), outStream, errStream)) {
      Object result;
      try {
        result = Subject.doAs(karafUser(), (PrivilegedExceptionAction<Object>) () -> session.execute(command));
      } catch (PrivilegedActionException e) {
        throw e.getException();
      }
      String printed = out.toString(StandardCharsets.UTF_8) + (result == null ? "" : result.toString());
      assertEquals(command + " wrote to stderr", "", err.toString(StandardCharsets.UTF_8));
      // the help is bold where the terminal allows; the README quotes its text
      return ANSI.matcher(printed).replaceAll("");
    }
  }
}
