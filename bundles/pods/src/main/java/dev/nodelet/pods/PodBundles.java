package dev.nodelet.pods;

/**
 * The names by which a pod's containers, run as bundles, find what Nodelet delivers to them: the bundle location
 * of a container, the annotation that chooses the PID of its configuration, and the properties Nodelet adds to that
 * configuration.
 */
public final class PodBundles {

  /** The configuration PID of the component that runs pods as bundles; without it no pod runs. */
  public static final String PID = "dev.nodelet.pods";

  /** The scheme of the bundle locations of pod containers: {@code nodelet-pod:<namespace>/<pod>/<container>}. */
  public static final String LOCATION_SCHEME = "nodelet-pod:";

  /**
   * The prefix of the annotation that chooses a container's configuration PID:
   * {@code pods.nodelet.dev/pid.<container>: <pid>}.
   */
  public static final String PID_ANNOTATION_PREFIX = "pods.nodelet.dev/pid.";

  /** The configuration PID of a container without the annotation: this prefix and the container's name. */
  public static final String DEFAULT_PID_PREFIX = "dev.nodelet.pod.";

  /** Configuration property: the pod's namespace. */
  public static final String POD_NAMESPACE = "nodelet.pod.namespace";

  /** Configuration property: the pod's name. */
  public static final String POD_NAME = "nodelet.pod.name";

  /** Configuration property: the pod's UID. */
  public static final String POD_UID = "nodelet.pod.uid";

  /** Configuration property: the container's name. */
  public static final String CONTAINER_NAME = "nodelet.container.name";

  /** Configuration property: the folder that holds the pod's volumes, one subfolder per volume. */
  public static final String VOLUMES_DIR = "nodelet.pod.volumes";

  /** Configuration property prefix: {@code nodelet.volume.<volume name>} is the folder of that volume. */
  public static final String VOLUME_PREFIX = "nodelet.volume.";

  /**
   * Configuration property: the devices prepared for the container's resource claims, each
   * {@code <driver>/<pool>/<device>}, in the order of the container's {@code resources.claims}; absent without any.
   * The device at index {@code n} has its details under {@link #DEVICE_PREFIX}{@code n.}.
   *
   * @since 1.1
   */
  public static final String DEVICES = "nodelet.devices";

  /**
   * Configuration property prefix: {@code nodelet.device.<n>.} followed by {@code claim} (the pod's claim entry),
   * {@code claimName} (the ResourceClaim), {@code request} (when the container names one), {@code driver},
   * {@code pool}, {@code device}, {@code cdiDeviceIds} (a String array) and {@code attribute.<name>} (each
   * attribute the driver's ResourceSlice gives the device: Boolean, Long or String).
   *
   * @since 1.1
   */
  public static final String DEVICE_PREFIX = "nodelet.device.";

  /**
   * Configuration property: the CDI device IDs of all the container's devices, in order (a String array).
   *
   * @since 1.1
   */
  public static final String CDI_DEVICE_IDS = "nodelet.devices.cdi";

  /**
   * Configuration property: the names of the properties whose values come from Secrets ({@code secretKeyRef},
   * {@code envFrom} with a {@code secretRef}), a String array; absent without any. Configuration Admin stores the
   * configuration without those values, which Nodelet adds each time it hands the configuration to the container's
   * bundle (a {@code ConfigurationPlugin}), so that no Secret value is written to disk. A component that sees a
   * name here without its property runs while Nodelet is not there to add it (a restart of the framework), and gets
   * it through its {@code @Modified} method once Nodelet is back.
   *
   * @since 1.2
   */
  public static final String SECRETS = "nodelet.secrets";

  private PodBundles() {
  }

  /**
   * @param namespace the pod's namespace
   * @param pod the pod's name
   * @param container the container's name
   * @return the bundle location of the container's bundle
   */
  public static String location(String namespace, String pod, String container) {
    return LOCATION_SCHEME + namespace + "/" + pod + "/" + container;
  }
}
