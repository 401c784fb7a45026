package dev.nodelet.pods.internal;

import static dev.nodelet.configuration.ConfigurationValues.within;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.objectcache.ConfigMapManager;
import dev.nodelet.objectcache.PodListener;
import dev.nodelet.objectcache.SecretManager;
import dev.nodelet.pods.PodBundles;
import dev.nodelet.pods.PodInfo;
import dev.nodelet.pods.PodsStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.apache.felix.hc.api.HealthCheck;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Runs this node's pods as bundles, opt-in: only with a configuration {@value PodBundles#PID}. Registers a
 * {@link PodListener} for the pod source once its configuration is valid; a valid change replaces the runtime,
 * which adopts the bundles the previous one installed. The pods' bundles outlive the component, so that a restarted
 * Nodelet adopts them; a pod that left while it was away is removed when the pod source says so.
 */
@Component(service = PodsStatus.class, immediate = true, configurationPid = PodBundles.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = PodsConfiguration.class)
public final class PodsComponent implements PodsStatus {

  private final BundleContext context;
  private final KubernetesClient client;
  private final String nodeName;
  private final ConfigMapManager configMaps;
  private final SecretManager secrets;
  private final ConfigurationAdmin configurationAdmin;
  private final LastGoodConfiguration<PodsConfiguration, Settings> configuration;
  private final Map<String, Pod> known = new ConcurrentHashMap<>(); // what the pod source said, for a new runtime
  private volatile PodRuntime runtime; // null until a valid configuration came
  private PodRuntimeBuilder.Following running; // runtime and its watches; guarded by this
  private volatile HealthCheck podsListedCheck; // the pod source's check that its pods are listed; null without
  // the claim manager's ClaimStatus, held untyped so that this bundle runs without the claim manager's bundle
  private volatile Object claimStatus;
  private volatile ServiceReference<?> claimStatusRef;
  private volatile Object featuresService; // Karaf's FeaturesService; null without Karaf
  private volatile ServiceReference<?> featuresServiceRef;
  // the component's, not a runtime's: a new runtime takes them over as they are
  private final SecretValues secretValues;
  private final DeviceServices deviceServices;

  @Activate
  public PodsComponent(BundleContext context, @Reference KubernetesClient client, @Reference NodeIdentity node,
      @Reference ConfigMapManager configMaps, @Reference SecretManager secrets,
      @Reference ConfigurationAdmin configurationAdmin, PodsConfiguration config) {
    this.context = context;
    this.client = client;
    this.nodeName = node.nodeName();
    this.configMaps = configMaps;
    this.secrets = secrets;
    this.configurationAdmin = configurationAdmin;
    this.secretValues = new SecretValues().register(context);
    this.deviceServices = new DeviceServices(context);
    this.configuration = LastGoodConfiguration.waiting(PodBundles.PID, "the pods", Settings::from,
            ServicePublisher.of(context))
        .publishing(new Listener(), Map.of(), PodListener.class);
    modified(config);
  }

  @Modified
  synchronized void modified(PodsConfiguration config) {
    configuration.apply(config, Map.of(), this::start);
  }

  private void start(Settings settings) {
    if (running != null) {
      running.close();
    }
    Path work = settings.workDir() != null ? settings.workDir() : context.getDataFile("").toPath();
    ImageSource images = new ImageSource(settings.localRepository(), settings.remoteRepositories(),
        settings.allowedGroups(), settings.allowedUrls(), work.resolve("downloads"),
        new FeatureImages(() -> featuresService, work.resolve("downloads")));
    running = new PodRuntimeBuilder(context, client, nodeName, configurationAdmin).managers(configMaps, secrets)
        .work(work).images(images).secretValues(secretValues).capacity(settings.capacity())
        .devices(new PodDevices(() -> claimStatus, new DeviceAttributes.FromSlices(client), deviceServices))
        .start();
    PodRuntime next = running.runtime();
    runtime = next;
    known.values().forEach(next::podUpdated);
    next.sweepWhenListed(this::podsListed, Duration.ofSeconds(5), Duration.ofSeconds(10));
  }

  @Override
  public List<PodInfo> pods() {
    PodRuntime current = runtime;
    return current == null ? List.of() : current.status();
  }

  /** @return true once the pod source listed this node's pods and handed them to its listeners */
  private boolean podsListed() {
    HealthCheck check = podsListedCheck;
    return check != null && check.execute().isOk();
  }

  @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY, target = "(hc.name=nodelet-pods-listed)")
  void bindPodsListed(HealthCheck check) {
    podsListedCheck = check;
  }

  void unbindPodsListed(HealthCheck check) {
    if (podsListedCheck == check) {
      podsListedCheck = null;
    }
  }

  // Karaf's FeaturesService, for feature: images; by name and reference only, so that Felix without Karaf resolves
  @Reference(service = org.apache.karaf.features.FeaturesService.class, cardinality = ReferenceCardinality.OPTIONAL,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
  void bindFeaturesService(ServiceReference<?> reference) {
    featuresServiceRef = reference;
    featuresService = context.getService(reference);
  }

  void unbindFeaturesService(ServiceReference<?> reference) {
    if (reference.equals(featuresServiceRef)) {
      featuresService = null;
      featuresServiceRef = null;
      context.ungetService(reference);
    }
  }

  // by name and reference only: no type of the claim manager's bundle appears in this class
  @Reference(service = dev.nodelet.dra.claims.ClaimStatus.class, cardinality = ReferenceCardinality.OPTIONAL,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
  void bindClaimStatus(ServiceReference<?> reference) {
    Object service = context.getService(reference);
    Object previous = claimStatus;
    ServiceReference<?> previousRef = claimStatusRef;
    claimStatusRef = reference;
    claimStatus = service;
    if (previous != null && previousRef != null) {
      context.ungetService(previousRef);
    }
  }

  void unbindClaimStatus(ServiceReference<?> reference) {
    if (reference.equals(claimStatusRef)) {
      claimStatus = null;
      claimStatusRef = null;
      context.ungetService(reference);
    }
  }

  /** The pod source's listener: hands pods to the runtime in force; never blocks. */
  private final class Listener implements PodListener {
    @Override
    public void registerPod(Pod pod) {
      known.put(PodRuntime.key(pod), pod);
      PodRuntime current = runtime;
      if (current != null) {
        current.podUpdated(pod);
      }
    }

    @Override
    public void unregisterPod(Pod pod) {
      known.remove(PodRuntime.key(pod));
      PodRuntime current = runtime;
      if (current != null) {
        current.podRemoved(pod);
      }
    }
  }

  @Deactivate
  synchronized void deactivate() {
    configuration.close();
    runtime = null;
    if (running != null) {
      running.close();
    }
    secretValues.close();
    deviceServices.close();
  }

  /** A validated configuration. */
  record Settings(Path localRepository, List<URI> remoteRepositories, List<String> allowedGroups,
      List<String> allowedUrls, Path workDir, int capacity) {

    /** @throws IllegalArgumentException naming the key that is wrong and why */
    static Settings from(PodsConfiguration config) {
      String local = config.maven_local_repository();
      Path localRepository = local == null || local.isBlank()
          ? Path.of(System.getProperty("user.home"), ".m2", "repository") : Path.of(local.trim());
      List<URI> remotes = Arrays.stream(config.maven_remote_repositories()).map(String::trim)
          .filter(s -> !s.isEmpty()).map(s -> {
            URI uri;
            try {
              uri = URI.create(s);
            } catch (IllegalArgumentException e) {
              throw new IllegalArgumentException("maven.remote.repositories: not a URL: " + s);
            }
            if (!"https".equals(uri.getScheme())) {
              throw new IllegalArgumentException("maven.remote.repositories: must be https URLs, was " + s);
            }
            return uri;
          }).toList();
      String work = config.work_dir();
      return new Settings(localRepository, remotes, trimmed(config.allowed_groups()),
          trimmed(config.allowed_urls()), work == null || work.isBlank() ? null : Path.of(work.trim()),
          (int) within("pods.capacity", config::pods_capacity, 1, 10000, ""));
    }

    private static List<String> trimmed(String[] values) {
      return values == null ? List.of()
          : Arrays.stream(values).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }
  }
}
