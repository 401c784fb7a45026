package dev.nodelet.pods.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration {@value dev.nodelet.pods.PodBundles#PID}; without it no pod runs. */
@ObjectClassDefinition(name = "Nodelet pods",
    description = "Runs the pods of this node as OSGi bundles: each container's image names the bundle to install.")
public @interface PodsConfiguration {

  @AttributeDefinition(name = "Local Maven repository",
      description = "The folder of a Maven repository (layout group/artifact/version) that mvn: images are taken "
          + "from first. Empty: ~/.m2/repository of the user running Nodelet.")
  String maven_local_repository() default "";

  @AttributeDefinition(name = "Remote Maven repositories",
      description = "https URLs of Maven repositories asked, in order, for mvn: images the local repository lacks.")
  String[] maven_remote_repositories() default {};

  @AttributeDefinition(name = "Allowed groups",
      description = "Maven groups that mvn: images may name ('org.example' exactly, 'org.example.*' with its "
          + "subgroups). Empty: any.")
  String[] allowed_groups() default {};

  @AttributeDefinition(name = "Allowed URLs",
      description = "Prefixes that file: and https: images must start with. Empty: any. A single '-' allows none.")
  String[] allowed_urls() default {};

  @AttributeDefinition(name = "Work folder",
      description = "Where downloaded bundles and the pods' volumes go. Empty: the bundle's data area.")
  String work_dir() default "";

  @AttributeDefinition(name = "Pods capacity",
      description = "Pods this node admits when its Node has no allocatable 'pods'. 1 to 10000.", min = "1",
      max = "10000")
  int pods_capacity() default 110;
}
