"""Berth's descriptions of the kinds it serves and their commonly used fields, as `kubectl explain`
prints them. Read by scripts/gen_openapi_schemas.py.

DESCRIPTIONS maps a definition ("core.v1.Pod" for io.k8s.api.core.v1.Pod, "meta.v1.ObjectMeta"
for apimachinery's) to {"": the type's description, field: the field's description}. A field not
listed is served without a description. The generator fails on a field the type does not have.

COMMON_KIND_FIELDS describes the fields every kind shares; a kind's own entry overrides them.
"""

COMMON_KIND_FIELDS = {
    "apiVersion": "The group and version of the schema this object follows, as \"group/version\" "
                  "(\"v1\" for the core group).",
    "kind": "The type of this object, in CamelCase. The server fills it in from the URL when "
            "absent.",
    "metadata": "Name, namespace, labels, annotations and the other data every object carries.",
    "spec": "The state the user wants.",
    "status": "The state the system last observed. Written by controllers and the node's agent, "
              "not by users.",
}

_SELECTOR = ("Which pods this object manages, by label. Must match the labels of the pod "
             "template; cannot change after creation.")
_TEMPLATE = "The pod each replica is created from."

DESCRIPTIONS = {
    # --- metadata -------------------------------------------------------------------------
    "meta.v1.ObjectMeta": {
        "": "Data every stored object carries: identity, labels, annotations, owners and the "
            "bookkeeping the server maintains.",
        "name": "The object's name, unique among objects of its kind in its namespace. Cannot "
                "change.",
        "namespace": "The namespace the object lives in. Empty for cluster-scoped kinds.",
        "generateName": "A prefix from which the server makes a unique name when `name` is "
                        "empty.",
        "labels": "String keys and values used to select and group objects (by label "
                  "selectors of services, controllers and queries).",
        "annotations": "String keys and values for tools and people; not used for selection.",
        "uid": "A unique identifier the server assigns on creation. Read-only.",
        "resourceVersion": "An opaque version of this object, changed on every write. Sent "
                           "back on update for optimistic concurrency. Read-only.",
        "generation": "A counter of changes to the desired state (spec), set by the server. "
                      "Read-only.",
        "creationTimestamp": "When the object was created (RFC 3339, UTC). Read-only.",
        "deletionTimestamp": "When a deletion was requested of an object that waits for its "
                             "finalizers. Read-only.",
        "deletionGracePeriodSeconds": "The grace period of a pending deletion, in seconds. "
                                      "Read-only.",
        "finalizers": "Names of the controllers that must clean up before the object is "
                      "removed. A deleted object stays until the list is empty.",
        "ownerReferences": "The objects this one depends on. When every owner is gone, the "
                           "object is garbage collected.",
        "managedFields": "Which manager set which fields, as recorded by server-side apply.",
    },
    "meta.v1.LabelSelector": {
        "": "Selects objects by their labels. Both parts must match (they are ANDed); an empty "
            "selector matches everything.",
        "matchLabels": "Labels an object must carry, with these exact values.",
        "matchExpressions": "Conditions on labels (In, NotIn, Exists, DoesNotExist).",
    },
    "meta.v1.LabelSelectorRequirement": {
        "": "A condition on one label.",
        "key": "The label key.",
        "operator": "In, NotIn, Exists or DoesNotExist.",
        "values": "The values for In and NotIn; empty for Exists and DoesNotExist.",
    },
    "meta.v1.OwnerReference": {
        "": "Names an object that owns this one.",
        "apiVersion": "The owner's API version.",
        "kind": "The owner's kind.",
        "name": "The owner's name.",
        "uid": "The owner's uid.",
        "controller": "True for the one owner that manages this object.",
        "blockOwnerDeletion": "When true, a foreground deletion of the owner waits for this "
                              "object to be deleted first.",
    },
    # --- pods -----------------------------------------------------------------------------
    "core.v1.Pod": {
        "": "The smallest deployable unit: one or more containers that share a network "
            "namespace and volumes, scheduled together onto one node.",
        "spec": "The pod's containers, volumes and scheduling constraints.",
        "status": "Where the pod runs, its phase and conditions and the state of each "
                  "container.",
    },
    "core.v1.PodSpec": {
        "": "What a pod runs and where it may run.",
        "containers": "The containers of the pod. At least one; they run side by side once "
                      "the init containers have finished.",
        "initContainers": "Containers run one after another, each to completion, before the "
                          "regular containers start.",
        "ephemeralContainers": "Containers added to a running pod for debugging.",
        "volumes": "Volumes the containers can mount.",
        "nodeName": "The node the pod runs on. Set by the scheduler when it binds the pod; "
                    "setting it at creation bypasses scheduling.",
        "nodeSelector": "Labels a node must carry for the pod to be scheduled onto it.",
        "affinity": "Node affinity and pod (anti-)affinity constraints and preferences used "
                    "by the scheduler.",
        "tolerations": "Taints of nodes the pod accepts.",
        "topologySpreadConstraints": "How the pod's group should spread across topology "
                                     "domains (zones, nodes).",
        "schedulerName": "The scheduler that places this pod. Defaults to default-scheduler.",
        "priorityClassName": "The PriorityClass whose value becomes the pod's priority.",
        "priority": "The pod's priority, resolved from priorityClassName on admission. Higher "
                    "values schedule first and may preempt lower ones.",
        "preemptionPolicy": "Whether the pod may preempt lower-priority pods: "
                            "PreemptLowerPriority (default) or Never.",
        "schedulingGates": "While any gate is listed, the pod is not scheduled. Gates may only "
                           "be removed.",
        "restartPolicy": "When the node restarts the pod's containers: Always (default), "
                         "OnFailure or Never.",
        "terminationGracePeriodSeconds": "Seconds between the stop signal and the kill when "
                                         "the pod is deleted.",
        "activeDeadlineSeconds": "How long the pod may run, in seconds, before it is stopped "
                                 "and marked failed.",
        "serviceAccountName": "The service account the pod runs as.",
        "serviceAccount": "Deprecated alias of serviceAccountName.",
        "hostNetwork": "Run in the node's network namespace.",
        "hostPID": "Share the node's process namespace.",
        "hostIPC": "Share the node's IPC namespace.",
        "hostname": "The pod's hostname; defaults to the pod's name.",
        "subdomain": "With hostname, gives the pod the DNS name "
                     "<hostname>.<subdomain>.<namespace>.svc.",
        "dnsPolicy": "How the pod's DNS is set up: ClusterFirst (default), "
                     "ClusterFirstWithHostNet, Default or None.",
        "imagePullSecrets": "Secrets holding registry credentials for pulling the images.",
        "securityContext": "Security settings for every container of the pod.",
        "overhead": "Resources the pod's runtime uses beyond its containers, counted by the "
                    "scheduler and quota.",
        "resources": "Resources for the pod as a whole, shared by its containers.",
        "runtimeClassName": "The RuntimeClass that runs the pod.",
        "readinessGates": "Extra conditions that must be true for the pod to be ready.",
        "os": "The operating system the containers need.",
    },
    "core.v1.Container": {
        "": "One container of a pod: an image to run, with its command, environment, ports, "
            "resources and mounts.",
        "name": "The container's name, unique within the pod.",
        "image": "The container image to run.",
        "imagePullPolicy": "When the image is pulled: Always, IfNotPresent or Never. Defaults "
                           "to Always for the :latest tag, else IfNotPresent.",
        "command": "The entrypoint, replacing the image's ENTRYPOINT. Not run in a shell.",
        "args": "Arguments to the entrypoint, replacing the image's CMD.",
        "workingDir": "The working directory; defaults to the image's.",
        "env": "Environment variables to set in the container.",
        "envFrom": "Sources (ConfigMaps, Secrets) whose keys all become environment "
                   "variables.",
        "ports": "Ports the container listens on. Informational, except hostPort.",
        "resources": "Compute resources the container requests (used for scheduling) and its "
                     "limits (enforced on the node).",
        "volumeMounts": "Volumes of the pod mounted into the container's filesystem.",
        "volumeDevices": "Block volumes of the pod exposed as devices.",
        "livenessProbe": "A check whose failure restarts the container.",
        "readinessProbe": "A check whose failure takes the pod out of service endpoints.",
        "startupProbe": "A check that must succeed before the other probes start.",
        "lifecycle": "Actions run after the container starts and before it stops.",
        "securityContext": "Security settings of this container, overriding the pod's.",
        "restartPolicy": "For an init container, Always makes it a sidecar that keeps running "
                         "beside the regular containers.",
        "stdin": "Keep a stdin buffer open for attaching clients.",
        "tty": "Allocate a terminal; needs stdin.",
        "terminationMessagePath": "The file whose contents become the termination message.",
        "terminationMessagePolicy": "File, or FallbackToLogsOnError to use the log tail when "
                                    "the file is empty.",
    },
    "core.v1.ResourceRequirements": {
        "": "Compute resources (cpu, memory, extended resources) a container asks for and may "
            "not exceed.",
        "requests": "The amounts the scheduler reserves on the node. Default to the limits "
                    "when only those are set.",
        "limits": "The most the container may use; memory above it gets the container killed, "
                  "cpu above it is throttled.",
    },
    "core.v1.ContainerPort": {
        "": "A port a container listens on.",
        "containerPort": "The port number inside the container.",
        "name": "A name for the port that services can refer to.",
        "protocol": "TCP (default), UDP or SCTP.",
        "hostPort": "A port of the node forwarded to the container; the scheduler places "
                    "only one pod per node on a given host port.",
        "hostIP": "The node address the host port binds to.",
    },
    "core.v1.EnvVar": {
        "": "An environment variable of a container.",
        "name": "The variable's name.",
        "value": "The value; $(OTHER) refers to a variable defined before.",
        "valueFrom": "Takes the value from a ConfigMap, a Secret or a field of the pod.",
    },
    "core.v1.VolumeMount": {
        "": "Where a volume appears in a container.",
        "name": "The pod volume to mount.",
        "mountPath": "The path in the container.",
        "readOnly": "Mount read-only.",
        "subPath": "A path inside the volume to mount instead of its root.",
    },
    "core.v1.Volume": {
        "": "A named volume of a pod, from one of the sources below.",
        "name": "The volume's name, referred to by volume mounts.",
        "emptyDir": "A directory that starts empty and lives as long as the pod.",
        "configMap": "The keys of a ConfigMap as files.",
        "secret": "The keys of a Secret as files.",
        "persistentVolumeClaim": "The volume bound to a PersistentVolumeClaim.",
        "hostPath": "A file or directory of the node.",
        "projected": "Several sources projected into one directory.",
    },
    "core.v1.Probe": {
        "": "A check the node runs against a container.",
        "exec": "Runs a command in the container; exit code 0 is success.",
        "httpGet": "An HTTP GET; a status from 200 to 399 is success.",
        "tcpSocket": "Opens a TCP connection.",
        "grpc": "A gRPC health check.",
        "initialDelaySeconds": "Seconds after the container starts before the first check.",
        "periodSeconds": "Seconds between checks (default 10).",
        "timeoutSeconds": "Seconds a check may take (default 1).",
        "failureThreshold": "Consecutive failures that count as failed (default 3).",
        "successThreshold": "Consecutive successes that count as passed after a failure "
                            "(default 1).",
    },
    "core.v1.Affinity": {
        "": "Scheduling constraints and preferences relative to nodes and to other pods.",
        "nodeAffinity": "Which nodes the pod may or prefers to run on, by node labels.",
        "podAffinity": "Pods this pod should run near (in the same topology domain).",
        "podAntiAffinity": "Pods this pod should run away from (not in the same topology "
                           "domain).",
    },
    "core.v1.NodeAffinity": {
        "": "Node constraints and preferences of a pod, by node labels and fields.",
        "requiredDuringSchedulingIgnoredDuringExecution":
            "Nodes the pod may be scheduled onto. Not re-checked once the pod runs.",
        "preferredDuringSchedulingIgnoredDuringExecution":
            "Weighted preferences: nodes matching more weight score higher.",
    },
    "core.v1.NodeSelector": {
        "": "A set of node selector terms; a node matching any term matches.",
        "nodeSelectorTerms": "The terms, ORed.",
    },
    "core.v1.NodeSelectorTerm": {
        "": "Conditions on a node, all of which must hold.",
        "matchExpressions": "Conditions on the node's labels.",
        "matchFields": "Conditions on the node's fields (metadata.name).",
    },
    "core.v1.NodeSelectorRequirement": {
        "": "A condition on one node label or field.",
        "key": "The label key or field name.",
        "operator": "In, NotIn, Exists, DoesNotExist, Gt or Lt.",
        "values": "The values to compare with; one integer for Gt and Lt, none for Exists "
                  "and DoesNotExist.",
    },
    "core.v1.PreferredSchedulingTerm": {
        "": "A node preference with its weight.",
        "weight": "From 1 to 100, added to the score of nodes that match.",
        "preference": "The nodes preferred.",
    },
    "core.v1.PodAffinity": {
        "": "Pods this pod should be placed with.",
        "requiredDuringSchedulingIgnoredDuringExecution":
            "Terms that must all hold for a node to be feasible.",
        "preferredDuringSchedulingIgnoredDuringExecution":
            "Weighted terms that raise the score of nodes where they hold.",
    },
    "core.v1.PodAntiAffinity": {
        "": "Pods this pod should be kept apart from.",
        "requiredDuringSchedulingIgnoredDuringExecution":
            "Terms none of which may hold on a feasible node.",
        "preferredDuringSchedulingIgnoredDuringExecution":
            "Weighted terms that lower the score of nodes where they hold.",
    },
    "core.v1.PodAffinityTerm": {
        "": "Pods selected by label in some namespaces, compared within a topology domain.",
        "labelSelector": "The pods this term is about.",
        "namespaces": "Namespaces to look in; empty means the pod's own.",
        "namespaceSelector": "Namespaces to look in, by namespace label.",
        "topologyKey": "The node label whose value defines a domain (e.g. "
                       "kubernetes.io/hostname, topology.kubernetes.io/zone).",
    },
    "core.v1.WeightedPodAffinityTerm": {
        "": "A pod affinity term with its weight.",
        "weight": "From 1 to 100.",
        "podAffinityTerm": "The term.",
    },
    "core.v1.Toleration": {
        "": "Lets a pod be scheduled onto (or keep running on) nodes with a matching taint.",
        "key": "The taint key; empty with operator Exists matches every taint.",
        "operator": "Equal (default) or Exists.",
        "value": "The taint value for Equal.",
        "effect": "The taint effect matched (NoSchedule, PreferNoSchedule, NoExecute); "
                  "empty matches all.",
        "tolerationSeconds": "For NoExecute: how long the pod stays after the taint appears.",
    },
    "core.v1.TopologySpreadConstraint": {
        "": "Bounds how unevenly matching pods may spread across topology domains.",
        "maxSkew": "The largest allowed difference between the number of matching pods in "
                   "any two eligible domains.",
        "topologyKey": "The node label whose values are the domains.",
        "whenUnsatisfiable": "DoNotSchedule (a filter) or ScheduleAnyway (a scoring "
                             "preference).",
        "labelSelector": "The pods counted.",
        "minDomains": "The least number of eligible domains; fewer count as having zero "
                      "pods.",
        "matchLabelKeys": "Label keys whose values, taken from the incoming pod, narrow the "
                          "pods counted.",
        "nodeAffinityPolicy": "Honor (default) or Ignore the pod's node affinity when "
                              "counting domains.",
        "nodeTaintsPolicy": "Honor or Ignore (default) node taints when counting domains.",
    },
    "core.v1.PodTemplateSpec": {
        "": "The metadata and spec of pods a controller creates.",
        "metadata": "Labels and annotations given to each pod.",
        "spec": "The spec of each pod.",
    },
    "core.v1.PodStatus": {
        "": "The observed state of a pod.",
        "phase": "Pending, Running, Succeeded, Failed or Unknown.",
        "conditions": "PodScheduled, Initialized, ContainersReady, Ready and others.",
        "hostIP": "The address of the node the pod runs on.",
        "podIP": "The pod's address.",
        "podIPs": "The pod's addresses, one per IP family.",
        "startTime": "When the node accepted the pod.",
        "nominatedNodeName": "A node where preemption made room for this pod; it is not yet "
                             "bound there.",
        "qosClass": "Guaranteed, Burstable or BestEffort, from the containers' requests and "
                    "limits.",
        "containerStatuses": "The state of each container.",
        "initContainerStatuses": "The state of each init container.",
        "message": "Why the pod is in this phase, for people.",
        "reason": "Why the pod is in this phase, in one CamelCase word.",
        "extendedResourceClaimStatus": "The ResourceClaim the scheduler created for the "
                                       "extended resources the pod requests that DeviceClasses "
                                       "back (spec.extendedResourceName), and which container "
                                       "request each of its device requests serves.",
    },
    "core.v1.PodCondition": {
        "": "One aspect of a pod's state.",
        "type": "The condition (PodScheduled, Ready, ...).",
        "status": "True, False or Unknown.",
        "reason": "Why, in one CamelCase word (Unschedulable, ...).",
        "message": "Why, for people.",
        "lastTransitionTime": "When the status last changed.",
    },
    "core.v1.ContainerStatus": {
        "": "The observed state of one container.",
        "name": "The container's name.",
        "ready": "Whether the container passes its readiness probe.",
        "restartCount": "How often the container was restarted.",
        "state": "Waiting, running or terminated, with details.",
        "image": "The image the container runs.",
    },
    "core.v1.Binding": {
        "": "Binds a pod to a node: what a scheduler posts to a pod's binding subresource.",
        "target": "The node the pod is bound to.",
    },
    # --- nodes ----------------------------------------------------------------------------
    "core.v1.Node": {
        "": "A machine that runs pods. Its capacity, labels and taints decide which pods the "
            "scheduler places on it.",
        "spec": "Taints, whether the node takes new pods, and its pod address ranges.",
        "status": "Capacity, allocatable resources, conditions, addresses and system "
                  "information, as reported by the node.",
    },
    "core.v1.NodeSpec": {
        "": "The configuration of a node.",
        "taints": "Taints repel pods that do not tolerate them.",
        "unschedulable": "When true (cordoned), no new pods are scheduled onto the node.",
        "podCIDR": "The address range of the node's pods.",
        "podCIDRs": "The address ranges of the node's pods, one per IP family.",
        "providerID": "The node's identifier at its cloud provider.",
    },
    "core.v1.Taint": {
        "": "A mark on a node that keeps off pods without a matching toleration.",
        "key": "The taint key.",
        "value": "The taint value.",
        "effect": "NoSchedule (no new pods), PreferNoSchedule (avoid if possible) or "
                  "NoExecute (also evicts running pods).",
        "timeAdded": "When a NoExecute taint was added.",
    },
    "core.v1.NodeStatus": {
        "": "The observed state of a node.",
        "capacity": "The node's total resources (cpu, memory, pods, ephemeral-storage, "
                    "extended resources).",
        "allocatable": "The resources available to pods: capacity minus what the system "
                       "reserves. The scheduler fits pods' requests within it.",
        "conditions": "Ready, MemoryPressure, DiskPressure, PIDPressure and others.",
        "addresses": "The node's addresses (InternalIP, ExternalIP, Hostname).",
        "nodeInfo": "Versions and identifiers of the node's operating system, kernel, "
                    "container runtime and kubelet.",
        "images": "Container images present on the node, with their sizes.",
        "daemonEndpoints": "The port of the node's kubelet.",
        "volumesAttached": "Volumes attached to the node.",
        "volumesInUse": "Volumes in use (mounted) on the node.",
        "phase": "Deprecated and unused.",
    },
    "core.v1.NodeCondition": {
        "": "One aspect of a node's health.",
        "type": "Ready, MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable.",
        "status": "True, False or Unknown.",
        "reason": "Why, in one CamelCase word.",
        "message": "Why, for people.",
        "lastHeartbeatTime": "When the node last reported this condition.",
        "lastTransitionTime": "When the status last changed.",
    },
    "core.v1.NodeAddress": {
        "": "An address of a node.",
        "type": "Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.",
        "address": "The address.",
    },
    "core.v1.NodeSystemInfo": {
        "": "Identifiers and versions reported by a node.",
        "architecture": "The CPU architecture (amd64, arm64).",
        "operatingSystem": "The operating system (linux, windows).",
        "osImage": "The operating system's name and version.",
        "kernelVersion": "The kernel version.",
        "containerRuntimeVersion": "The container runtime and its version.",
        "kubeletVersion": "The kubelet's version.",
        "machineID": "The machine's identifier.",
        "systemUUID": "The hardware's UUID.",
        "bootID": "Changes on every boot.",
    },
    # --- workloads ------------------------------------------------------------------------
    "apps.v1.Deployment": {
        "": "Keeps a number of identical pods running and rolls out changes to their template "
            "through ReplicaSets.",
        "spec": "The pod template, the number of replicas and the rollout strategy.",
        "status": "How many replicas exist, are updated, ready and available.",
    },
    "apps.v1.DeploymentSpec": {
        "": "The desired state of a Deployment.",
        "replicas": "How many pods to run (default 1).",
        "selector": _SELECTOR,
        "template": _TEMPLATE,
        "strategy": "How pods are replaced on a change: RollingUpdate (default) or Recreate.",
        "minReadySeconds": "Seconds a new pod must be ready before it counts as available.",
        "revisionHistoryLimit": "Old ReplicaSets kept for rollback (default 10).",
        "paused": "While true, template changes do not roll out.",
        "progressDeadlineSeconds": "Seconds a rollout may make no progress before it is "
                                   "reported as failed (default 600).",
    },
    "apps.v1.DeploymentStrategy": {
        "": "How a Deployment replaces its pods.",
        "type": "RollingUpdate (default) or Recreate.",
        "rollingUpdate": "How many pods may be missing or extra during a rolling update.",
    },
    "apps.v1.RollingUpdateDeployment": {
        "": "The pace of a rolling update.",
        "maxSurge": "Pods (number or percentage of replicas) that may exist beyond the wanted "
                    "number during the update (default 25%).",
        "maxUnavailable": "Pods (number or percentage of replicas) that may be unavailable "
                          "during the update (default 25%).",
    },
    "apps.v1.DeploymentStatus": {
        "": "The observed state of a Deployment.",
        "replicas": "Pods of the Deployment.",
        "updatedReplicas": "Pods with the current template.",
        "readyReplicas": "Pods that are ready.",
        "availableReplicas": "Pods ready for at least minReadySeconds.",
        "unavailableReplicas": "Pods still needed for the wanted number to be available.",
        "observedGeneration": "The generation the controller last acted on.",
        "conditions": "Available, Progressing and ReplicaFailure.",
    },
    "apps.v1.ReplicaSet": {
        "": "Keeps a number of identical pods running. Usually managed by a Deployment.",
        "spec": "The pod template and the number of replicas.",
        "status": "How many replicas exist and are ready.",
    },
    "apps.v1.ReplicaSetSpec": {
        "": "The desired state of a ReplicaSet.",
        "replicas": "How many pods to run (default 1).",
        "selector": _SELECTOR,
        "template": _TEMPLATE,
        "minReadySeconds": "Seconds a new pod must be ready before it counts as available.",
    },
    "apps.v1.StatefulSet": {
        "": "Runs pods with stable names and storage, created and updated in order.",
        "spec": "The pod template, replicas, volume claim templates and update strategy.",
        "status": "How many replicas exist, are ready and are updated.",
    },
    "apps.v1.StatefulSetSpec": {
        "": "The desired state of a StatefulSet.",
        "replicas": "How many pods to run (default 1).",
        "selector": _SELECTOR,
        "template": _TEMPLATE,
        "serviceName": "The headless service that gives each pod its DNS name.",
        "volumeClaimTemplates": "Claims created for each pod, kept across its restarts.",
        "podManagementPolicy": "OrderedReady (default: one at a time, in order) or Parallel.",
        "updateStrategy": "RollingUpdate (default) or OnDelete.",
    },
    "apps.v1.DaemonSet": {
        "": "Runs one copy of a pod on each eligible node.",
        "spec": "The pod template and the update strategy.",
        "status": "How many nodes run the pod and how many should.",
    },
    "apps.v1.DaemonSetSpec": {
        "": "The desired state of a DaemonSet.",
        "selector": _SELECTOR,
        "template": _TEMPLATE,
        "updateStrategy": "RollingUpdate (default) or OnDelete.",
        "minReadySeconds": "Seconds a new pod must be ready before it counts as available.",
    },
    "apps.v1.ControllerRevision": {
        "": "An immutable snapshot of a StatefulSet's or DaemonSet's pod template, kept for "
            "rollbacks.",
        "data": "The snapshot.",
        "revision": "The revision number.",
    },
    "batch.v1.Job": {
        "": "Runs pods until a number of them complete successfully.",
        "spec": "The pod template, completions, parallelism and failure policy.",
        "status": "Active, succeeded and failed pods, and when the Job started and ended.",
    },
    "batch.v1.JobSpec": {
        "": "The desired state of a Job.",
        "template": "The pod each run is created from; its restartPolicy must be Never or "
                    "OnFailure.",
        "completions": "Successful pods needed for the Job to complete.",
        "parallelism": "The most pods running at once.",
        "backoffLimit": "Retries before the Job is marked failed (default 6).",
        "activeDeadlineSeconds": "How long the Job may run before it is stopped.",
        "ttlSecondsAfterFinished": "Seconds after the Job finishes before it is deleted.",
        "suspend": "While true, no pods are created and running ones are stopped.",
        "selector": "Which pods belong to the Job; generated unless manualSelector is set.",
        "completionMode": "NonIndexed (default) or Indexed.",
    },
    "batch.v1.CronJob": {
        "": "Creates Jobs on a schedule.",
        "spec": "The schedule and the Job template.",
        "status": "Running Jobs and when a Job was last scheduled.",
    },
    "batch.v1.CronJobSpec": {
        "": "The desired state of a CronJob.",
        "schedule": "When to run, in cron syntax.",
        "timeZone": "The time zone of the schedule; defaults to the controller's.",
        "jobTemplate": "The Job created at each run.",
        "concurrencyPolicy": "Allow (default), Forbid or Replace a run while the previous "
                             "one still runs.",
        "suspend": "While true, no new runs start.",
        "startingDeadlineSeconds": "How late a missed run may still start.",
        "successfulJobsHistoryLimit": "Finished Jobs kept (default 3).",
        "failedJobsHistoryLimit": "Failed Jobs kept (default 1).",
    },
    "core.v1.ReplicationController": {
        "": "Keeps a number of identical pods running; the older form of ReplicaSet.",
    },
    "core.v1.PodTemplate": {
        "": "A stored pod template.",
        "template": "The template.",
    },
    "policy.v1.PodDisruptionBudget": {
        "": "Limits how many of a set of pods voluntary disruptions (evictions, drains) may "
            "take down at once.",
        "spec": "The pods covered and how many must stay available.",
        "status": "How many pods are healthy and how many disruptions are allowed now.",
    },
    "policy.v1.PodDisruptionBudgetSpec": {
        "": "The desired state of a PodDisruptionBudget.",
        "selector": "The pods the budget covers.",
        "minAvailable": "Pods (number or percentage) that must stay available.",
        "maxUnavailable": "Pods (number or percentage) that may be unavailable.",
        "unhealthyPodEvictionPolicy": "IfHealthyBudget (default) or AlwaysAllow: whether "
                                      "pods not yet ready may be evicted.",
    },
    "scheduling.v1.PriorityClass": {
        "": "A named priority for pods. Pods that name it get its value; higher values are "
            "scheduled first and may preempt lower ones.",
        "value": "The priority pods of this class get.",
        "globalDefault": "Whether pods without a priorityClassName get this class. At most "
                         "one class should set it.",
        "description": "When to use this class, for people.",
        "preemptionPolicy": "PreemptLowerPriority (default) or Never.",
    },
    # --- dynamic resource allocation -----------------------------------------------------
    "resource.v1.DeviceClass": {
        "": "A kind of device pods can claim: the selectors every device of the class must "
            "satisfy and the configuration drivers receive for it. Cluster-scoped.",
        "spec": "The selectors and configuration of the class.",
    },
    "core.v1.PodExtendedResourceClaimStatus": {
        "": "The claim holding the devices allocated for a pod's extended resources.",
        "resourceClaimName": "The name of the ResourceClaim, in the pod's namespace.",
        "requestMappings": "Per container and extended resource: the device request of the "
                           "claim that serves it.",
    },
    "core.v1.ContainerExtendedResourceRequest": {
        "": "Which device request of the claim serves one container's extended resource.",
        "containerName": "The container (or init container) that requests the resource.",
        "resourceName": "The extended resource, as named in the container's requests.",
        "requestName": "The request in the claim's spec.devices.requests.",
    },
    "resource.v1.DeviceClassSpec": {
        "selectors": "CEL expressions a device must all satisfy to belong to the class.",
        "config": "Opaque configuration handed to the drivers of the allocated devices.",
        "extendedResourceName": "An extended resource name (`example.com/gpu`) pods may "
                                "request through container resources instead of a claim; "
                                "the scheduler allocates one device of the class per unit. "
                                "Every class also answers to "
                                "deviceclass.resource.kubernetes.io/<class name>. Where several "
                                "classes name the same resource, the newest one serves it.",
    },
    "resource.v1.ResourceClaim": {
        "": "A request for devices, allocated by the scheduler and reserved for the pods that "
            "use it.",
        "spec": "The devices requested. Cannot change after creation.",
        "status": "The allocation and the pods it is reserved for, written through the "
                  "status subresource.",
    },
    "resource.v1.ResourceClaimSpec": {
        "devices": "The requests, constraints across them and their configuration.",
    },
    "resource.v1.DeviceClaim": {
        "requests": "What to allocate, each request by a unique name.",
        "constraints": "Conditions across the devices of several requests (for example one "
                       "attribute value shared by all of them).",
        "config": "Opaque configuration for the drivers of some or all requests.",
    },
    "resource.v1.DeviceRequest": {
        "name": "The request's name, a DNS label unique in the claim; containers and "
                "constraints refer to it.",
        "exactly": "Devices of one class. Exactly one of exactly and firstAvailable is set.",
        "firstAvailable": "Alternatives in order of preference; the first that can be "
                          "allocated is.",
    },
    "resource.v1.ExactDeviceRequest": {
        "deviceClassName": "The DeviceClass the devices must belong to. Required.",
        "selectors": "CEL expressions the devices must also satisfy.",
        "allocationMode": "ExactCount (default): `count` devices; All: every matching device.",
        "count": "How many devices, with allocationMode ExactCount. Defaults to 1.",
        "tolerations": "Device taints the request tolerates.",
        "adminAccess": "Access to devices already in use, for monitoring and administration.",
    },
    "resource.v1.ResourceClaimStatus": {
        "allocation": "The devices allocated, set once; it can only be cleared.",
        "reservedFor": "The pods (at most 256) that may use the allocated devices.",
    },
    "resource.v1.ResourceClaimTemplate": {
        "": "The spec of the ResourceClaims made for pods that name this template, one claim "
            "per pod.",
        "spec": "The metadata and spec of each claim made from the template. Cannot change "
                "after creation.",
    },
    "resource.v1.ResourceSlice": {
        "": "Devices a driver offers, as one slice of a pool: on one node, on a selection of "
            "nodes or on all nodes. Cluster-scoped.",
        "spec": "The driver, pool, where the devices are reachable and the devices.",
    },
    "resource.v1.ResourceSliceSpec": {
        "driver": "The driver's name, a DNS subdomain. Cannot change.",
        "pool": "The pool this slice belongs to and the pool's generation.",
        "nodeName": "The node the devices are on. Exactly one of nodeName, nodeSelector, "
                    "allNodes and perDeviceNodeSelection is set.",
        "nodeSelector": "The nodes the devices are reachable from (one term).",
        "allNodes": "Whether the devices are reachable from every node.",
        "perDeviceNodeSelection": "Whether each device says where it is reachable.",
        "devices": "The devices of the slice, at most 128, each with a unique name.",
        "sharedCounters": "Counter sets devices of the pool consume from (in a slice of "
                          "their own).",
    },
    "resource.v1.DeviceTaintRule": {
        "": "One taint that applies to every device the selector picks, as if the driver had "
            "published it in the device's ResourceSlice. Cluster-scoped.",
        "spec": "The selector and the one taint. Changing it increments metadata.generation.",
        "status": "What became of the rule, written through the status subresource.",
    },
    "resource.v1.DeviceTaintRuleSpec": {
        "deviceSelector": "Which devices the taint applies to; every set field must match.",
        "taint": "The taint the selected devices get.",
    },
    "resource.v1.DeviceTaintRuleStatus": {
        "conditions": "At most 8 conditions about the rule's effect.",
    },
    "resource.v1.DeviceTaintSelector": {
        "driver": "Only devices of this driver (a slice's spec.driver).",
        "pool": "Only devices of this pool (a slice's spec.pool.name).",
        "device": "Only devices of this name (spec.devices[].name of a slice).",
    },
    "resource.v1.ResourcePool": {
        "name": "The pool's name, unique per driver.",
        "generation": "Increased when the pool changes; slices of an older generation are "
                      "ignored.",
        "resourceSliceCount": "How many slices make up the pool at this generation.",
    },
    "resource.v1.Device": {
        "name": "The device's name, a DNS label unique in the pool.",
        "attributes": "Typed values (bool, int, string, version) selectors and constraints "
                      "read, by qualified name.",
        "capacity": "Quantities of the device (memory, ...), by qualified name.",
        "taints": "Taints that keep requests not tolerating them off the device.",
        "consumesCounters": "Counters of the pool's shared counter sets the device uses up.",
    },
    "resource.v1.CELDeviceSelector": {
        "expression": "A CEL expression over `device` (driver, attributes, capacity) that "
                      "must evaluate to true.",
    },
    # --- configuration and services -------------------------------------------------------
    "core.v1.Namespace": {
        "": "A scope for names: most objects live in a namespace, and deleting it deletes "
            "them.",
        "spec": "The namespace's finalizers.",
        "status": "Active or Terminating.",
    },
    "core.v1.ConfigMap": {
        "": "Configuration data as string keys and values, for pods to read as files or "
            "environment variables.",
        "data": "UTF-8 values by key.",
        "binaryData": "Base64-encoded binary values by key.",
        "immutable": "When true, the data cannot change (the object can only be deleted).",
    },
    "core.v1.Secret": {
        "": "Sensitive data (passwords, tokens, keys) for pods to read as files or "
            "environment variables.",
        "data": "Base64-encoded values by key.",
        "stringData": "Plain values by key, merged into data on write; never read back.",
        "type": "The kind of secret (Opaque, kubernetes.io/tls, ...), which decides the keys "
                "it must have.",
        "immutable": "When true, the data cannot change.",
    },
    "core.v1.ServiceAccount": {
        "": "An identity for processes that run in pods.",
        "secrets": "Secrets the account's pods may use.",
        "imagePullSecrets": "Registry credentials given to the account's pods.",
    },
    "core.v1.Service": {
        "": "A stable address for a set of pods selected by label, load-balanced across them.",
        "spec": "The pods selected, the ports and how the service is exposed.",
        "status": "The load balancer's state, for type LoadBalancer.",
    },
    "core.v1.ServiceSpec": {
        "": "The desired state of a Service.",
        "selector": "Labels of the pods traffic goes to.",
        "ports": "The ports the service exposes.",
        "type": "ClusterIP (default), NodePort, LoadBalancer or ExternalName.",
        "clusterIP": "The service's virtual address; None makes a headless service.",
        "externalName": "The DNS name an ExternalName service aliases.",
        "sessionAffinity": "None (default) or ClientIP to keep a client on one pod.",
    },
    "core.v1.ServicePort": {
        "": "A port of a service.",
        "name": "The port's name; required when there are several ports.",
        "port": "The port the service listens on.",
        "targetPort": "The pods' port (number or name); defaults to port.",
        "protocol": "TCP (default), UDP or SCTP.",
        "nodePort": "The port on every node, for NodePort and LoadBalancer services.",
    },
    "core.v1.Endpoints": {
        "": "The addresses and ports behind a service.",
        "subsets": "Groups of addresses sharing the same ports.",
    },
    "core.v1.Event": {
        "": "A report of something that happened to an object, such as a pod that could "
            "not be scheduled.",
        "involvedObject": "The object the event is about.",
        "reason": "What happened, in one CamelCase word (Scheduled, FailedScheduling, ...).",
        "message": "What happened, for people.",
        "type": "Normal or Warning.",
        "count": "How often it happened.",
        "firstTimestamp": "When it first happened.",
        "lastTimestamp": "When it last happened.",
        "source": "The component that reported it.",
        "reportingComponent": "The component that reported it.",
    },
    "events.v1.Event": {
        "": "A report of something that happened to an object (the events.k8s.io form).",
        "regarding": "The object the event is about.",
        "reason": "What happened, in one CamelCase word.",
        "note": "What happened, for people.",
        "type": "Normal or Warning.",
        "action": "What the reporter did or failed to do.",
        "eventTime": "When it first happened.",
        "reportingController": "The controller that reported it.",
    },
    "core.v1.PersistentVolume": {
        "": "A piece of storage in the cluster that claims bind to.",
    },
    "core.v1.PersistentVolumeClaim": {
        "": "A request for storage by a user, bound to a PersistentVolume.",
        "spec": "The storage asked for: size, access modes and class.",
        "status": "Whether the claim is bound, and its capacity.",
    },
    "core.v1.PersistentVolumeClaimSpec": {
        "": "The storage a claim asks for.",
        "accessModes": "ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.",
        "resources": "The size requested (requests.storage).",
        "storageClassName": "The StorageClass that provisions the volume.",
        "volumeName": "A specific PersistentVolume to bind.",
        "selector": "Volumes the claim may bind, by label.",
    },
    "core.v1.LimitRange": {
        "": "Default, minimum and maximum resources for pods and containers in a namespace.",
    },
    "core.v1.ResourceQuota": {
        "": "Caps the total resources and object counts of a namespace.",
    },
    "coordination.v1.Lease": {
        "": "A lease held by one holder at a time, used for leader election and node "
            "heartbeats.",
        "spec": "The holder and the lease's times.",
    },
    "coordination.v1.LeaseSpec": {
        "": "The state of a lease.",
        "holderIdentity": "Who holds the lease.",
        "leaseDurationSeconds": "How long the holder keeps the lease without renewing it.",
        "acquireTime": "When the current holder acquired the lease.",
        "renewTime": "When the holder last renewed the lease.",
        "leaseTransitions": "How often the lease changed holders.",
    },
    "storage.v1.StorageClass": {
        "": "A class of storage that volumes are provisioned from.",
        "provisioner": "The driver that provisions volumes.",
        "volumeBindingMode": "Immediate, or WaitForFirstConsumer to bind once a pod is "
                             "scheduled.",
    },
    "storage.v1.CSINode": {"": "The CSI drivers installed on a node."},
    "storage.v1.CSIDriver": {"": "How the cluster works with a CSI volume driver."},
    "storage.v1.CSIStorageCapacity": {"": "Storage capacity a CSI driver offers in a topology "
                                          "segment, for scheduling."},
    "storage.v1.VolumeAttachment": {"": "A request to attach a volume to a node."},
    "rbac.v1.Role": {"": "Permissions within one namespace."},
    "rbac.v1.ClusterRole": {"": "Permissions across the cluster or on cluster-scoped "
                                "resources."},
    "rbac.v1.RoleBinding": {"": "Grants a Role or ClusterRole to subjects within a "
                                "namespace."},
    "rbac.v1.ClusterRoleBinding": {"": "Grants a ClusterRole to subjects across the cluster."},
    "networking.v1.Ingress": {"": "HTTP routes from outside the cluster to services."},
    "networking.v1.IngressClass": {"": "The controller that implements a class of Ingresses."},
    "networking.v1.NetworkPolicy": {"": "Which traffic may reach and leave selected pods."},
}
